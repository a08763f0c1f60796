"""Loading a checkpoint without fairseq: the dictionary reader gives fairseq's indices, the plain
encoder is the training model (same parameter names, same seeded initialisation), and a loading
process never imports fairseq."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fairseq.data import Dictionary

from support.tiny_checkpoint import write_tiny_checkpoint
from xling.errors import InputError
from xling.model.checkpoint import load_encoder
from xling.pretrain.dictionary import TokenDictionary

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


XLM_OPTIONS = {"language_embeddings": True, "mlm_head": "xlm", "layer_norm_eps": 1e-12, "activation_dropout": 0.0,
               "param_init": "xlm"}


@pytest.mark.parametrize("options", [{}, XLM_OPTIONS], ids=["older", "xlm"])
def test_seeded_random_encoder_is_fairseqs_initialisation(tmp_path, options):
    """write_tiny_checkpoint saves a fairseq-built encoder initialised under seed 3; the loader's
    random encoder under seed 3 draws the same weights (Figure 7's random baseline), with the
    checkpoint's own initialisation."""
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, seed=3, separate_embeddings=True, **options)
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
        "from xling.model.checkpoint import load_encoder\n"
        f"enc = load_encoder({str(ckpt)!r}, {str(dict_path)!r})\n"
        "states = enc.encode(torch.tensor([[0, 5, 6, 2]]), 'fr')\n"
        "assert len(states) == 1 + enc.num_layers\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fairseq', 'fairseq_cli', 'hydra')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


def test_a_checkpoint_from_before_xlms_options_loads_as_it_was_trained(tmp_path):
    """No language embeddings, BERT's head, torch's LayerNorm eps and the layers' dropout after the
    FFN's activation: the weights load strictly and the loaded model is the one that was saved."""
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, separate_layers=0)
    margs = torch.load(ckpt, weights_only=False)["cfg"]["model"]
    assert not hasattr(margs, "mlm_head") or margs.mlm_head == "bert"
    enc = load_encoder(ckpt, dict_path).encoder
    assert enc.embed_languages is None and enc.mlm_head == "bert" and enc.lm_layer_norm.eps == 1e-5
    assert all(layer.norm1.eps == 1e-5 and layer.dropout.p == margs.dropout for layer in enc.shared_layers)
    tokens = torch.tensor([[0, 5, 6, 7, 2]])
    en, fr = (load_encoder(ckpt, dict_path).encode(tokens, lang)[-1] for lang in ("en", "fr"))
    assert torch.equal(en, fr)  # everything shared: the language changes nothing


def test_a_checkpoint_with_language_embeddings_encodes_each_language_with_its_row(tmp_path):
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, separate_layers=0, **XLM_OPTIONS)
    loaded = load_encoder(ckpt, dict_path)
    enc = loaded.encoder
    assert enc.embed_languages.weight.shape == (2, enc.dim) and enc.mlm_head == "xlm"
    tokens = torch.tensor([[0, 5, 6, 7, 2]])
    states = {lang: loaded.encode(tokens, lang) for lang in ("en", "fr")}
    x = enc.embed_tokens[0](tokens) + enc.embed_positions[0].weight[:5] + enc.embed_languages.weight[1]
    torch.testing.assert_close(states["fr"][0], enc.emb_layer_norm[0](x))
    assert not torch.allclose(states["en"][-1], states["fr"][-1])


def pad_checkpoint(old: Path, new: Path, multiple: int) -> None:
    """``old`` (one table row per entry, --vocab-multiple 1) as the same model with its tables
    padded by zero rows to a multiple of ``multiple``, as that run would have saved it."""
    from xling.pretrain.encoder import padded_rows

    state = torch.load(old, weights_only=False)
    rows = padded_rows(state["model"]["encoder.lm_bias"].numel(), multiple)
    for key, value in list(state["model"].items()):
        if key.startswith("encoder.embed_tokens.") or key == "encoder.lm_bias":
            state["model"][key] = torch.cat([value, value.new_zeros(rows - value.shape[0], *value.shape[1:])])
        if key == "encoder.vocab_mask":  # the padding rows are no language's
            state["model"][key] = torch.cat([value, value.new_zeros(value.shape[0], rows - value.shape[1])], 1)
    state["cfg"]["model"].vocab_multiple = multiple
    torch.save(state, new)


@pytest.mark.parametrize("separate_embeddings", [False, True])
def test_unpadded_and_padded_checkpoints_load_to_the_same_encoder(tmp_path, separate_embeddings):
    old, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, seed=2, vocab_multiple=1,
                                              separate_embeddings=separate_embeddings)
    state = torch.load(old, weights_only=False)
    if separate_embeddings:  # a vocabulary mask over the unpadded rows
        vocab = state["model"]["encoder.lm_bias"].numel()
        state["model"]["encoder.vocab_mask"] = torch.rand(2, vocab, generator=torch.Generator().manual_seed(0)) < 0.7
        state["model"]["encoder.vocab_mask"][:, :4] = True
        torch.save(state, old)
    new = tmp_path / "padded.pt"
    pad_checkpoint(old, new, 64)
    a, b = load_encoder(old, dict_path), load_encoder(new, dict_path)
    n = len(a.dictionary)
    assert a.encoder.vocab_rows == n and b.encoder.vocab_rows % 64 == 0 and b.encoder.vocab_rows > n
    assert a.encoder.vocab_size == b.encoder.vocab_size == n
    tokens = torch.tensor([[0, 5, 6, 7, 2], [0, 8, 2, 1, 1]])
    padding = tokens.eq(1)
    for lang in ("en", "fr"):
        with torch.no_grad():
            sa, sb = a.encode(tokens, lang, padding), b.encode(tokens, lang, padding)
            for x, y in zip(sa, sb):
                torch.testing.assert_close(x[~padding], y[~padding])
            la = a.encoder.output_layer(sa[-1], a.lang_id(lang))
            lb = b.encoder.output_layer(sb[-1], b.lang_id(lang))
        assert la.shape[-1] == lb.shape[-1] == n
        torch.testing.assert_close(la, lb)
        if separate_embeddings:
            assert torch.isneginf(la[..., ~a.encoder.vocab_mask[a.lang_id(lang)]]).all()


def test_a_checkpoint_of_code_from_before_an_option_is_refused_naming_it(tmp_path):
    """No model argument takes a value the checkpoint does not record: one written before
    --vocab-multiple (or another option) is refused, not loaded as a guess."""
    old, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, vocab_multiple=None)
    with pytest.raises(InputError, match=r"checkpoint_best\.pt.*--vocab-multiple missing.*retrain"):
        load_encoder(old, dict_path)


def test_a_dictionary_that_does_not_fit_the_tables_is_named(tmp_path):
    ckpt, _, dict_path = write_tiny_checkpoint(tmp_path, SENTENCES, vocab_multiple=8)
    other = tmp_path / "other.txt"
    other.write_text(dict_path.read_text() + "".join(f"extra{i} 1\n" for i in range(9)), encoding="utf-8")
    with pytest.raises(InputError, match=r"other\.txt.*table rows.*multiple of 8"):
        load_encoder(ckpt, other)
