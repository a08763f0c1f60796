"""Figure 5's path: fast_align links -> linked word states -> W_i -> the mapped bottom recovers a
planted rotation; the task model trains only its new layers (the frozen bottom stays as it was);
the figures from job results."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from xling.analysis.align import apply_iterative_normalization, fit_iterative_normalization, iterative_normalize
from xling.analysis.transfer import (
    Bottom,
    Side,
    StackedEncoder,
    new_layers,
    read_links,
    run_links,
    run_maps,
    run_transfer,
    write_links,
)
from xling.errors import InputError
from xling.preprocess.tokenize import TokenizeSettings


def test_fitted_iterative_normalization_is_iterative_normalize_on_its_own_data():
    X = np.random.default_rng(0).normal(size=(50, 6)) + 3.0
    means = fit_iterative_normalization(X, 4)
    assert means.shape == (4, 6)
    np.testing.assert_allclose(apply_iterative_normalization(X, means), iterative_normalize(X, 4), atol=1e-12)
    assert apply_iterative_normalization(X, fit_iterative_normalization(X, 0)).shape == X.shape


class Planted(nn.Module):
    """A context-free encoder: every layer l of word w is (l + 1) * E[w] (with E rotated by R for the
    'target' language), so the linked words' vectors are known exactly."""

    def __init__(self, words: list[str], table: np.ndarray, layers: int = 2):
        super().__init__()
        from fairseq.data import Dictionary

        self.dictionary = Dictionary()
        for w in words:
            self.dictionary.add_symbol(w)
        E = np.zeros((len(self.dictionary), table.shape[1]), dtype=np.float32)
        for w, row in zip(words, table):
            E[self.dictionary.index(w)] = row
        self.E = nn.Parameter(torch.tensor(E))
        self.num_layers = layers

    def encode(self, tokens, lang, padding_mask=None):
        return [self.E[tokens] * (l + 1) for l in range(self.num_layers + 1)]


def identity(words):
    return [[w] for w in words]


def test_planted_rotation_is_recovered_through_links_maps_and_bottom(tools, tmp_path):
    rng = np.random.default_rng(1)
    n, dim = 30, 8
    en = [f"w{i}" for i in range(n)]
    fr = [f"m{i}" for i in range(n)]
    X = rng.normal(size=(n, dim)).astype(np.float32)
    R, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    src, tgt = Planted(en, X), Planted(fr, (X @ R).astype(np.float32))
    # parallel rows: the French side is the English words translated, in reverse order
    pyrng = random.Random(2)
    rows = [[pyrng.randrange(n) for _ in range(pyrng.randint(3, 7))] for _ in range(600)]
    way = tmp_path / "XNLI-15way" / "xnli.15way.orig.tsv"
    way.parent.mkdir()
    way.write_text("en\tfr\n" + "".join(" ".join(en[i] for i in r) + "\t" + " ".join(fr[i] for i in reversed(r))
                                        + "\n" for r in rows), encoding="utf-8")
    links_path = tmp_path / "links.tsv"
    settings = {lang: TokenizeSettings(lang) for lang in ("en", "fr")}
    stats = run_links("en-fr", tmp_path, len(rows), settings, tools, links_path)
    s_tok, t_tok, links = read_links(links_path)
    good = sum(fr.index(t_tok[r][j]) == en.index(s_tok[r][i]) for r, l in enumerate(links) for i, j in l)
    assert stats["links"] > 1000 and good >= 0.95 * stats["links"]
    maps_path = tmp_path / "maps.npz"
    run_maps(links_path, {"source": (src, "en", identity), "target": (tgt, "fr", identity)}, 3, maps_path)
    maps = np.load(maps_path)
    assert maps["W"].shape == (3, dim, dim) and int(maps["links"]) > 1000
    # W maps the target's normalised states onto the source's: the planted R, inverted, where the
    # links are right (a few wrong links perturb it only slightly)
    for layer in range(3):
        np.testing.assert_allclose(maps["W"][layer], R.T, atol=0.05)
    # the mapped target bottom lands (near) where the source bottom puts each word's translation
    ids = torch.tensor([[tgt.dictionary.index(w) for w in fr[:10]]])
    mapped = Bottom(tgt, "fr", 2, maps["means_target"][2], maps["W"][2])(ids, torch.zeros_like(ids, dtype=torch.bool))
    ids_en = torch.tensor([[src.dictionary.index(w) for w in en[:10]]])
    ref = Bottom(src, "en", 2, maps["means_source"][2])(ids_en, torch.zeros_like(ids_en, dtype=torch.bool))
    cos = torch.nn.functional.cosine_similarity(mapped, ref, dim=-1)
    assert cos.min() > 0.95


def test_linked_word_states_are_the_mean_of_each_words_pieces():
    from test_finetune_real_encoder import tiny_loaded_encoder

    from xling.analysis.transfer import linked_word_states
    from xling.model.text import WordEncoder

    torch.manual_seed(0)
    enc = tiny_loaded_encoder(False, 0)
    vocab = [s for s in enc.dictionary.symbols[enc.dictionary.nspecial:] if not s.startswith("madeup")][:12]
    pieces = {w: [w, vocab[(i + 3) % len(vocab)]] if i % 3 == 0 else [w] for i, w in enumerate(vocab)}

    def segment(words):
        return [[p + "@@" for p in pieces[w][:-1]] + pieces[w][-1:] for w in words]

    pyrng = random.Random(0)
    sents = [[pyrng.choice(vocab) for _ in range(pyrng.randint(2, 6))] for _ in range(9)]
    words = [sorted(pyrng.sample(range(len(s)), k=pyrng.randint(0, len(s)))) for s in sents]
    got = linked_word_states(enc, "en", sents, words, segment, batch_size=4)
    we = WordEncoder(enc.dictionary, segment, 64)
    n = 0
    with torch.no_grad():
        for s, ks in zip(sents, words):
            e = we.encode_words(s)
            states = torch.stack(enc.encode(torch.tensor([e.ids]), "en"))[:, 0]
            ends = e.first[1:] + [len(e.ids) - 1]
            for k in ks:
                np.testing.assert_allclose(got[:, n], states[:, e.first[k] : ends[k]].mean(1).numpy(), atol=1e-5)
                n += 1
    assert n == got.shape[1] > 5


def test_links_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "links.tsv"
    write_links(path, [["a", "b"]], [["x", "y"]], [[(0, 1), (1, 0)]])
    assert read_links(path) == ([["a", "b"]], [["x", "y"]], [[(0, 1), (1, 0)]])
    path.write_text("a b\tx y\t0-1 1-0\na b\tx\t1-3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"links.tsv:2.*within 2 source and 1 target"):
        read_links(path)


# --- the task model -------------------------------------------------------------------------------


def _ner_dir(root, seed: int, train: int, held_out: int):
    """Synthetic en and fr NER splits under ``root/ner`` (``held_out`` sentences each for dev and test)."""
    from test_finetune_real_encoder import make_ner

    ner = root / "ner"
    rng = random.Random(seed)
    for lang in ("en", "fr"):
        (ner / lang).mkdir(parents=True)
        for split, n in (("train", train), ("dev", held_out), ("test", held_out)):
            (ner / lang / f"{split}.bio").write_text(make_ner(rng, n), encoding="utf-8")
    return ner


def test_only_the_new_layers_train_and_the_bottom_stays_frozen(tmp_path):
    from test_finetune import per_word
    from test_finetune_real_encoder import files, job, tiny_loaded_encoder

    ner = _ner_dir(tmp_path, 5, 200, 50)
    torch.manual_seed(0)
    enc = tiny_loaded_encoder(False, 0)
    before = {k: v.clone() for k, v in enc.state_dict().items()}
    top = {"dim": 32, "heads": 4, "ffn": 64, "layers": 2, "dropout": 0.1}
    # a probe of what training sees: the bottom is in eval mode while the top trains
    probe = StackedEncoder(Bottom(enc, "en", 1), new_layers(32, 4, 64, 2), enc.dictionary)
    probe.train(True)
    assert probe.top.training and not probe.bottom.encoder.training
    assert not any(p.requires_grad for p in enc.parameters())
    res = run_transfer(job(3), [{"batch_size": 16, "lr": 3e-3}], 1, Side(enc, "en", per_word("en")),
                       {"fr": (Side(enc, "fr", per_word("fr")), ner / "fr" / "test.bio")}, files(ner), top_k=1, top=top)
    after = enc.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before), "a frozen parameter changed"
    assert res["en_dev"] > 50 and 0 <= res["tgt_test"]["fr"] <= 100, res
    assert res["layer"] == 1 and len(res["cells"]) == 1


def test_a_grid_gives_each_cell_what_it_gives_alone(tmp_path):
    """The task data is encoded once for all cells: a cell's result must not depend on its neighbours."""
    from test_finetune import per_word
    from test_finetune_real_encoder import files, job, tiny_loaded_encoder

    ner = _ner_dir(tmp_path, 6, 80, 30)
    torch.manual_seed(0)
    enc = tiny_loaded_encoder(False, 0)
    top = {"dim": 32, "heads": 4, "ffn": 64, "layers": 1, "dropout": 0.1}
    grid = [{"batch_size": 16, "lr": 3e-3}, {"batch_size": 8, "lr": 1e-3}]

    def run(cells):
        return run_transfer(job(1), cells, 1, Side(enc, "en", per_word("en")),
                            {"fr": (Side(enc, "fr", per_word("fr")), ner / "fr" / "test.bio")}, files(ner), top_k=1,
                            top=top)["cells"]

    together = run(grid)
    alone = [run([c])[0] for c in grid]
    assert [(c["en_dev"], c["tgt_test"]) for c in together] == [(c["en_dev"], c["tgt_test"]) for c in alone]


def test_bottom_rejects_a_layer_the_model_does_not_have():
    from test_finetune_real_encoder import tiny_loaded_encoder

    with pytest.raises(ValueError, match="layer 3 is not in 0..2"):
        Bottom(tiny_loaded_encoder(False, 0), "en", 3)


def test_transfer_figures_and_tables(tmp_path):
    from xling.report.transfer_figures import check_transfer, figure5, figure8, transfer_markdown, write_transfer_csv

    results = [{"task": t, "pair": p, "layer": i, "metric": "f1",
                "tgt_test": {"mlm_align": 10.0 + i, "bimlm": 20.0 + i, "bimlm_w": 21.0 + i},
                "en_dev": {"mlm_align": 80.0, "bimlm": 81.0, "bimlm_w": 82.0}}
               for t in ("ner", "parsing") for p in ("en-ru", "en-fr") for i in (4, 0)]
    ordered = check_transfer(results)
    assert [(r["task"], r["pair"], r["layer"]) for r in ordered[:3]] == [("ner", "en-fr", 0), ("ner", "en-fr", 4),
                                                                         ("ner", "en-ru", 0)]
    figure5(results, tmp_path / "5.png", tmp_path / "5.pdf")
    figure8(results, tmp_path / "8.png", tmp_path / "8.pdf")
    write_transfer_csv(results, tmp_path / "5.csv")
    assert len((tmp_path / "5.csv").read_text().splitlines()) == 1 + 3 * len(results)
    md = transfer_markdown(results)
    assert "| L4 | 14.0 | 24.0 | 25.0 |" in md and "**Parsing (LAS)**" in md
    with pytest.raises(ValueError, match="more than once"):
        check_transfer(results + results[:1])
    bad = dict(results[0], tgt_test={"mlm_align": 1.0, "bimlm": 2.0})
    with pytest.raises(ValueError, match="tgt_test.bimlm_w"):
        check_transfer([bad])
    assert Path(tmp_path / "5.png").stat().st_size > 1000
