"""Figure 4's word vectors and word translation: whole-word selection on a hand-made BPE, the
contextual average on a planted encoder and on a real tiny checkpoint, alignment of a planted
rotation, the fastText text format, and the job from vector files to the figures."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from support.tiny_checkpoint import write_tiny_checkpoint  # noqa: E402
from xling.analysis.align import translate
from xling.analysis.vec import read_vec, write_vec
from xling.analysis.words import (
    align_both_ways,
    align_words,
    bpe_words,
    contextual_word_vectors,
    dictionary_pairs,
    vocabulary,
    whole_words,
)
from xling.bpe.apply import load_codes, segment_words
from xling.errors import InputError

CODES = "#version: 0.2\np l\npl a\npla y</w>\ni n\nin g</w>\n"


@pytest.fixture
def segment(tmp_path):
    path = tmp_path / "codes"
    path.write_text(CODES, encoding="utf-8")
    bpe = load_codes(path)
    return lambda words: segment_words(bpe, words)


def test_hand_made_bpe_segments_as_expected(segment):
    assert segment(["play", "playing", "ing", "xyz"]) == [["play"], ["pla@@", "y@@", "ing"], ["ing"],
                                                         ["x@@", "y@@", "z"]]


def test_whole_words_are_entries_bpe_leaves_in_one_piece(segment):
    symbols = ["<s>", "<pad>", "</s>", "<unk>", "play", "pla@@", "y@@", "ing", "xyz", "madeupword0000"]
    got = whole_words(symbols, segment, skip=["<s>", "<pad>", "</s>", "<unk>", "madeupword0000"])
    # "xyz" is an entry but BPE would split the word xyz: not a one-subword word
    assert got == [("play", 4), ("ing", 7)]


def test_bpe_words_groups_pieces_and_drops_a_dangling_piece():
    assert bpe_words(["pla@@", "y@@", "ing", "the", "x@@"]) == [("playing", 0, 3), ("the", 3, 4)]
    assert bpe_words([]) == []


# --- the contextual average --------------------------------------------------------------------


class PlantedEncoder:
    """Layer l state of a token = (l + 1) * its embedding + l * the sum of its sentence's
    embeddings: every occurrence of a word differs with its context."""

    def __init__(self, dictionary, layers: int = 2, dim: int = 3, seed: int = 0):
        self.dictionary, self.layers = dictionary, layers
        self.E = torch.randn(len(dictionary), dim, generator=torch.Generator().manual_seed(seed))

    def train(self, mode: bool = True):
        return self

    def encode(self, tokens, lang, padding_mask=None):
        x = self.E[tokens]
        ctx = (x * (~padding_mask)[..., None]).sum(1, keepdim=True)
        return [x * (l + 1) + ctx * l for l in range(self.layers + 1)]


def _dictionary(tokens):
    from fairseq.data import Dictionary

    d = Dictionary()
    for t in tokens:
        d.add_symbol(t)
    return d


def _expected(enc: PlantedEncoder, lines: list[str], layers: int) -> dict[str, np.ndarray]:
    """The definition, one occurrence at a time: a word's vector = mean over its occurrences of
    the mean of its pieces' states (states of <s> + pieces + </s>)."""
    d, occ = enc.dictionary, {}
    for line in lines:
        toks = line.split()
        ids = [d.bos()] + [d.index(t) for t in toks] + [d.eos()]
        x = enc.E[torch.tensor(ids)].numpy().astype(np.float64)
        ctx = x.sum(0)
        for word, a, b in bpe_words(toks):
            states = np.stack([(x[a + 1 : b + 1] * (l + 1) + ctx * l).mean(0) for l in range(layers + 1)])
            occ.setdefault(word, []).append(states)
    return {w: np.mean(v, axis=0) for w, v in occ.items()}


def test_contextual_average_matches_its_definition():
    lines = ["the cat sat", "the pla@@ y@@ ing cat", "a cat", "pla@@ y@@ ing the game", "the"]
    d = _dictionary(sorted({t for line in lines for t in line.split()}))
    enc = PlantedEncoder(d, layers=2)
    words, counts, vecs = contextual_word_vectors(enc, "en", lines, max_words=100, batch_size=2)
    assert words[:2] == ["the", "cat"] and list(counts[:2]) == [4, 3]  # by count, then alphabetically
    assert vecs.shape == (3, len(words), 3) and vecs.dtype == np.float32
    expected = _expected(enc, lines, 2)
    assert set(words) == set(expected) and "playing" in words
    for i, w in enumerate(words):
        np.testing.assert_allclose(vecs[:, i], expected[w], rtol=1e-5, atol=1e-5)


def test_contextual_keeps_the_most_frequent_words_and_skips_cut_occurrences():
    lines = ["the cat sat", "the pla@@ y@@ ing cat", "a cat"]
    d = _dictionary(sorted({t for line in lines for t in line.split()}))
    enc = PlantedEncoder(d)
    words, _, _ = contextual_word_vectors(enc, "en", lines, max_words=2)
    assert words == ["cat", "the"]
    # room for 2 pieces: "playing" is cut in the middle, "sat" and the second "cat" never fit
    words, counts, _ = contextual_word_vectors(enc, "en", lines, max_words=10, max_seq_len=4)
    assert dict(zip(words, counts.tolist())) == {"the": 2, "cat": 2, "a": 1}


def test_contextual_average_on_a_real_checkpoint_equals_one_sentence_at_a_time(tmp_path):
    from xling.analysis.words import embedding_word_vectors
    from xling.bpe import SubwordTokenizer
    from xling.io import first_lines
    from xling.model.checkpoint import load_encoder

    rng = random.Random(0)
    vocab = ["cat", "dog", "catalogue", "doghouse", "sees", "eats", "the", "big"]
    sents = [" ".join(rng.choice(vocab) for _ in range(rng.randint(2, 7))) for _ in range(80)]
    ckpt, bpe, dict_path = write_tiny_checkpoint(tmp_path, {"en": sents}, merges=12, separate_layers=0)
    enc = load_encoder(ckpt, dict_path)
    lines = first_lines(bpe.parent / "en.train.bpe", 30)
    words, counts, vecs = contextual_word_vectors(enc, "en", lines, max_words=1000, batch_size=7)
    d = enc.dictionary
    occ: dict[str, list] = {}
    with torch.no_grad():
        for line in lines:
            toks = line.split()
            ids = torch.tensor([[d.bos()] + [d.index(t) for t in toks] + [d.eos()]])
            states = torch.stack(enc.encode(ids, "en", padding_mask=ids.eq(d.pad())))[:, 0]
            for w, a, b in bpe_words(toks):
                occ.setdefault(w, []).append(states[:, a + 1 : b + 1].mean(1).numpy())
    for i, w in enumerate(words):
        assert counts[i] == len(occ[w])
        np.testing.assert_allclose(vecs[:, i], np.mean(occ[w], axis=0), rtol=1e-4, atol=1e-5)
    # Figure 4a's rows are the embedding matrix's rows of the one-piece entries
    seg = SubwordTokenizer(bpe, "en").words_to_subwords
    ew, emb = embedding_word_vectors(enc, "en", seg)
    assert ew and all(seg([w]) == [[w]] for w in ew) and not any(w.endswith("@@") for w in ew)
    table = enc.encoder.embed_tokens[0].weight.detach().numpy()
    np.testing.assert_array_equal(emb, table[[d.index(w) for w in ew]])


# --- alignment ---------------------------------------------------------------------------------


def _rotation(dim: int, seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(dim, dim)))
    return q


def test_align_words_recovers_a_planted_rotation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 16))
    Y = X @ _rotation(16, 1) + 0.01 * rng.normal(size=(300, 16))
    train, test = [(i, i) for i in range(200)], [(i, i) for i in range(200, 300)]
    res = align_words(X, Y, train, test, norm_steps=5, k=10)
    assert res["p_at_1"] == 100.0 and res["train_pairs"] == 200 and res["test_sources"] == 100
    unrelated = align_words(X, rng.normal(size=(300, 16)), train, test)
    assert unrelated["p_at_1"] < 10.0


def test_align_both_ways_uses_only_words_with_vectors_and_swaps_the_dictionary():
    rng = np.random.default_rng(2)
    en = [f"w{i}" for i in range(120)]
    fr = [f"m{i}" for i in range(120)]
    X = rng.normal(size=(120, 8))
    Y = X @ _rotation(8, 3)
    train = [(en[i], fr[i]) for i in range(80)] + [("nope", "m1")]
    test = [(en[i], fr[i]) for i in range(80, 120)] + [("w90", "absent")]
    assert len(dictionary_pairs(train, en, fr)) == 80
    res = align_both_ways((en, X), (fr, Y), train, test)
    assert res["forward"]["p_at_1"] == 100.0 == res["reverse"]["p_at_1"]
    assert res["forward"]["test_sources"] == 40 and res["reverse"]["vocab"] == [120, 120]


def test_csls_hubness_is_measured_against_the_given_sources():
    rng = np.random.default_rng(4)
    X_all, Y = rng.normal(size=(60, 6)), rng.normal(size=(40, 6))
    queries = [3, 17, 42]
    k = 5

    def unit(M):
        return M / np.linalg.norm(M, axis=1, keepdims=True)

    Xn, Yn = unit(X_all), unit(Y)
    cos = Xn @ Yn.T
    r_y = np.sort(cos, axis=1)[:, -k:].mean(1)  # each source's k nearest targets
    r_x = np.sort(cos.T, axis=1)[:, -k:].mean(1)  # each target's k nearest among ALL sources
    expected = (2 * cos[queries] - r_y[queries, None] - r_x[None, :]).argmax(1)
    got = translate(X_all[queries], Y, method="csls", k=k, sources=X_all)
    np.testing.assert_array_equal(got, expected)


def test_vocabulary_lowercases_like_muse_and_keeps_the_first_form():
    assert vocabulary(["The", "the", "Cat", "dog"]) == (["the", "cat", "dog"], [0, 2, 3])
    assert vocabulary(["The", "the", "Cat", "dog"], keep={"dog", "the"}) == (["the", "dog"], [0, 3])


# --- the fastText text format ------------------------------------------------------------------


def test_vec_round_trip_and_row_limit(tmp_path):
    words, M = ["the", "cat", "sat"], np.arange(6, dtype=np.float32).reshape(3, 2) / 7
    write_vec(tmp_path / "w.vec", words, M)
    got_words, got = read_vec(tmp_path / "w.vec")
    assert got_words == words
    np.testing.assert_allclose(got, M, atol=1e-5)
    assert read_vec(tmp_path / "w.vec", max_rows=2)[0] == ["the", "cat"]


@pytest.mark.parametrize("text, line, what", [
    ("the 0.1 0.2\n", 1, "fastText header"),
    ("2 2\nthe 0.1 0.2\ncat 0.3\n", 3, "a word and 2 numbers"),
    ("1 2\nthe 0.1 x\n", 2, "2 numbers after the word"),
])
def test_malformed_vec_names_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "bad.vec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=what) as err:
        read_vec(path)
    assert str(path) in str(err.value) and f":{line}" in str(err.value)


# --- the job: vector files -> result -> figures --------------------------------------------------


def _vector_files(root: Path, lang: str, words: list[str], emb: np.ndarray, ctx: np.ndarray) -> dict[str, Path]:
    """What rule word_vectors writes for one language."""
    root.mkdir(parents=True, exist_ok=True)
    files = {"embedding": root / f"{lang}.embedding.npy", "contextual": root / f"{lang}.contextual.npy",
             "embedding_words": root / f"{lang}.embedding.words.txt",
             "contextual_words": root / f"{lang}.contextual.words.tsv"}
    np.save(files["embedding"], emb)
    np.save(files["contextual"], ctx)
    files["embedding_words"].write_text("".join(w + "\n" for w in words), encoding="utf-8")
    files["contextual_words"].write_text("".join(f"{w}\t9\n" for w in words), encoding="utf-8")
    return files


def test_word_alignment_job_and_figures(tmp_path):
    from xling.analysis.run import run_word_alignment
    from xling.report.word_figures import check_figure4, figure4_markdown, figure4_rows, figure4a, figure4b

    rng = np.random.default_rng(5)
    n, dim, layers = 150, 12, 3
    en = [f"w{i}" for i in range(n)]
    fr = [f"M{i}" for i in range(n)]  # upper case: MUSE's lowercase dictionary still finds them
    emb = rng.normal(size=(n, dim)).astype(np.float32)
    ctx = rng.normal(size=(layers, n, dim)).astype(np.float32)
    ctx_fr = np.stack([ctx[l] @ _rotation(dim, 10 + l) if l != 1 else rng.normal(size=(n, dim)) for l in range(layers)])
    vectors = {"en": _vector_files(tmp_path / "v", "en", en, emb, ctx),
               "fr": _vector_files(tmp_path / "v", "fr", fr, (emb @ _rotation(dim, 7)).astype(np.float32),
                                   ctx_fr.astype(np.float32))}
    ft = rng.normal(size=(n + 20, 6))
    write_vec(tmp_path / "wiki.en.vec", en + [f"x{i}" for i in range(20)], ft)
    write_vec(tmp_path / "wiki.fr.vec", [w.lower() for w in fr[:100]], ft[:100] @ _rotation(6, 8))
    muse = tmp_path / "train.txt", tmp_path / "test.txt"
    muse[0].write_text("".join(f"w{i} m{i}\n" for i in range(70)), encoding="utf-8")
    muse[1].write_text("".join(f"w{i} m{i}\n" for i in range(70, 150)), encoding="utf-8")
    out = tmp_path / "en-fr.json"
    res = run_word_alignment("en-fr", vectors, {"en": tmp_path / "wiki.en.vec", "fr": tmp_path / "wiki.fr.vec"},
                             muse, fasttext_rows=1000, norm_steps=3, k=5, out_json=out)
    assert json.loads(out.read_text()) == res
    e = res["embedding"]
    # both methods on the same words: the 100 French words fastText has
    assert e["mlm"]["forward"]["vocab"] == e["fasttext"]["forward"]["vocab"] == [150, 100]
    assert e["mlm"]["forward"]["test_sources"] == 30  # m70..m99
    assert e["mlm"]["forward"]["p_at_1"] == 100.0 == e["fasttext"]["forward"]["p_at_1"]
    p = [s["forward"]["p_at_1"] for s in res["contextual"]["mlm"]]
    assert p[0] == 100.0 == p[2] and p[1] < 20.0  # the planted unrelated layer
    check_figure4([res])
    figure4a([res], tmp_path / "a.png", tmp_path / "a.pdf")
    figure4b([res], tmp_path / "b.png", tmp_path / "b.pdf")
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("a.png", "a.pdf", "b.png", "b.pdf"))
    rows = figure4_rows([res])
    assert len(rows) == 2 * (2 + layers + 1) and {r["direction"] for r in rows} == {"en->fr", "fr->en"}
    md = figure4_markdown([res])
    assert "| en→fr | 100.0 | 100.0 |" in md and "| L1 |" in md


def test_figure4_rejects_a_result_without_both_directions():
    from xling.report.word_figures import check_figure4

    bad = {"pair": "en-fr", "embedding": {"mlm": {"forward": {"p_at_1": 50}}, "fasttext": {}}, "contextual": {}}
    with pytest.raises(ValueError, match="en-fr.*embedding.mlm.*both directions"):
        check_figure4([bad])
