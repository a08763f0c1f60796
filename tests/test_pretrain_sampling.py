"""Pure maths of language sampling and per-language vocabularies, against their definitions."""

import numpy as np
import pytest
from fairseq.data import Dictionary

from xling.errors import InputError
from xling.pretrain.sampling import language_sampling_probs, resampling_ratios
from xling.pretrain.vocab import (
    maskable_tokens,
    out_of_language_remap,
    read_language_vocab,
    replacement_weights,
)


def test_sampling_probs_follow_power_law():
    counts = np.array([9000.0, 1000.0, 250.0])
    p = language_sampling_probs(counts, 0.7)
    q = (counts / counts.sum()) ** 0.7
    assert np.allclose(p, q / q.sum()) and np.isclose(p.sum(), 1.0)
    # smaller languages are upsampled relative to their share, larger ones downsampled
    share = counts / counts.sum()
    assert p[0] < share[0] and p[2] > share[2]
    assert np.allclose(language_sampling_probs(counts, 1.0), share)
    assert np.allclose(language_sampling_probs(counts, 0.0), 1 / 3)
    with pytest.raises(ValueError):
        language_sampling_probs([10, 0], 0.7)


def test_resampling_ratios_give_target_shares():
    p = np.array([0.6, 0.4])
    blocks = np.array([900, 100])
    r = resampling_ratios(p, blocks)
    sizes = r * blocks
    assert np.isclose(sizes.sum(), blocks.sum()) and np.allclose(sizes / sizes.sum(), p)


def make_dict(words):
    d = Dictionary()
    for w in words:
        d.add_symbol(w)
    d.finalize(padding_factor=8)
    return d


def test_language_vocab_and_replacement_weights(tmp_path):
    d = make_dict(["a1", "a2", "b1", "b2", "b3"])
    mask_idx = d.add_symbol("<mask>")
    (tmp_path / "dict.a.txt").write_text("a1 5\na2 3\n")
    va = read_language_vocab(tmp_path / "dict.a.txt", d)
    assert va[d.index("a1")] and va[d.index("a2")] and not va[d.index("b1")]
    assert va[: d.nspecial].all() and not va[mask_idx]
    ok = maskable_tokens(d, mask_idx)
    assert not ok[mask_idx] and not ok[: d.nspecial].any()
    assert not any(ok[i] for i, s in enumerate(d.symbols) if s.startswith("madeupword"))
    w = replacement_weights(d, mask_idx, va)
    assert np.isclose(w.sum(), 1) and set(np.flatnonzero(w)) == {d.index("a1"), d.index("a2")}
    w_all = replacement_weights(d, mask_idx, None)
    assert set(np.flatnonzero(w_all)) == {d.index(t) for t in ["a1", "a2", "b1", "b2", "b3"]}
    remap = out_of_language_remap(va, d.unk())
    assert remap[d.index("b2")] == d.unk() and remap[d.index("a2")] == d.index("a2")


def test_language_vocab_rejects_bad_lines(tmp_path):
    d = make_dict(["a1"])
    (tmp_path / "dict.x.txt").write_text("a1 5\nzz 2\n")
    with pytest.raises(InputError, match=r"dict\.x\.txt:2"):
        read_language_vocab(tmp_path / "dict.x.txt", d)
    with pytest.raises(InputError, match=r"dict\.z\.txt"):
        read_language_vocab(tmp_path / "dict.z.txt", d)
    (tmp_path / "dict.y.txt").write_text("a1\n")
    with pytest.raises(InputError, match=r"dict\.y\.txt:1"):
        read_language_vocab(tmp_path / "dict.y.txt", d)
