"""Loading a checkpoint without fairseq: the dictionary reader gives fairseq's indices, the plain
encoder is the training model (same parameter names, same seeded initialisation), and a loading
process never imports fairseq."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from fairseq.data import Dictionary

from support.tiny_checkpoint import write_tiny_checkpoint
from xling.errors import InputError
from xling.pretrain.dictionary import TokenDictionary
from xling.pretrain.loader import load_encoder

SENTENCES = {"en": ["the cat sat on the mat", "a dog ran"] * 5, "fr": ["le chat dort", "un chien court"] * 5}


def test_dictionary_has_fairseqs_indices(tmp_path):
    path = tmp_path / "dict.txt"
    path.write_text("the 10\nca@@ 4\nt 3\n<mask> 1\nt 7 #fairseq:overwrite\nχ 1\n", encoding="utf-8")
    ours, theirs = TokenDictionary.load(path), Dictionary.load(str(path))
    for d in (ours, theirs):
        d.add_symbol("<mask>")
    assert ours.symbols == theirs.symbols and ours.indices == theirs.indices and ours.count == theirs.count
    assert len(ours) == len(theirs) and ours.nspecial == theirs.nspecial
    assert [ours.bos(), ours.pad(), ours.eos(), ours.unk()] == [theirs.bos(), theirs.pad(), theirs.eos(),
                                                               theirs.unk()]
    assert ours.index("missing") == theirs.index("missing") == ours.unk()
    assert ours[len(ours)] == theirs[len(theirs)] == "<unk>"


@pytest.mark.parametrize("text,line", [("the 10\nca@@\n", 2), ("the 10\nthe 3\n", 2), ("a 1\nb x\n", 2)])
def test_a_bad_dictionary_line_is_named(tmp_path, text, line):
    path = tmp_path / "dict.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        TokenDictionary.load(path)
    assert str(path) in str(err.value) and f":{line}" in str(err.value)


def test_seeded_random_encoder_is_fairseqs_initialisation(tmp_path):
    """write_tiny_checkpoint saves a fairseq-built encoder initialised under seed 3; the loader's
    random encoder under seed 3 draws the same weights (Figure 7's random baseline)."""
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, seed=3, separate_embeddings=True)
    saved = torch.load(ckpt, weights_only=False)["model"]
    fresh = load_encoder(ckpt, dict_path, random_init_seed=3).encoder.state_dict()
    assert set(fresh) == {k.removeprefix("encoder.") for k in saved}
    for k, v in fresh.items():
        torch.testing.assert_close(v, saved[f"encoder.{k}"], rtol=0, atol=0, msg=k)
    other = load_encoder(ckpt, dict_path, random_init_seed=4).encoder.state_dict()
    assert not torch.equal(other["embed_tokens.0.weight"], fresh["embed_tokens.0.weight"])


def test_loading_and_encoding_import_no_fairseq(tmp_path):
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES)
    code = (
        "import sys, torch\n"
        "from xling.pretrain.loader import load_encoder\n"
        f"enc = load_encoder({str(ckpt)!r}, {str(dict_path)!r})\n"
        "states = enc.encode(torch.tensor([[0, 5, 6, 2]]), 'fr')\n"
        "assert len(states) == 1 + enc.num_layers\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fairseq', 'fairseq_cli', 'hydra')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
