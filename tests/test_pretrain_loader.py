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
        "from xling.pretrain.loader import load_encoder\n"
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
