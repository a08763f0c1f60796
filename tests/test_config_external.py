"""analysis.external_models: rows of transformers checkpoints, checked before any job (one error
naming the key for a missing directory, a model that is no encoder, a language without Section 5's
data, a monolingual pair of different depths)."""

import copy
import json
import shutil

import pytest

from support.tiny_transformers import EVERY_KIND, make_checkpoints, write_texts
from xling import config as xcfg
from xling.errors import ConfigError

PAPER = xcfg.load_yaml(xcfg.REPO / "config" / "config.yaml")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-transformers")
    return make_checkpoints(root / "models", write_texts(root / "text"), every_kind=True)


def with_rows(rows: dict) -> dict:
    cfg = copy.deepcopy(PAPER)
    cfg["analysis"]["external_models"] = rows
    return cfg


def rows_of(tiny) -> dict:
    return {"pair": {"role": "monolingual", "models": {"en": str(tiny["bert_en"]), "fr": str(tiny["camembert_fr"])}},
            "mbert": {"role": "multilingual", "label": "m-BERT", "path": str(tiny["mbert"]),
                      "languages": ["en", "fr", "de"]}}


def problems(cfg) -> str:
    with pytest.raises(ConfigError) as err:
        xcfg.validate(cfg)
    return str(err.value)


def test_rows_and_their_jobs(tiny):
    cfg = with_rows(rows_of(tiny))
    xcfg.validate(cfg)
    rows = xcfg.external.rows(cfg)
    assert [(r.name, r.role, r.label) for r in rows] == [("pair", "monolingual", "pair"),
                                                         ("mbert", "multilingual", "m-BERT")]
    assert rows[1].models == {lang: str(tiny["mbert"]) for lang in ("en", "fr", "de")}
    assert xcfg.external.jobs(cfg) == [("pair", "fr"), ("mbert", "fr"), ("mbert", "de")]
    empty = copy.deepcopy(PAPER)
    xcfg.validate(empty)
    assert empty["analysis"]["external_models"] == {} and xcfg.external.jobs(empty) == []


@pytest.mark.parametrize("kind", ["mbert", "xlmr", *EVERY_KIND])
def test_every_encoder_automodel_loads_plans_a_row_and_reads_its_layers(tiny, kind):
    """Depth and width as transformers' own config class reads them (DistilBERT's n_layers/dim,
    XLM's n_layers/emb_dim; XLM's masked LM is called XLMWithLMHeadModel): each kind plans a
    multilingual row, and its encoder, trained or untrained, gives 1 + depth layers of that width."""
    from xling.model import PretrainedModel

    rows = {"one": {"role": "multilingual", "path": str(tiny[kind]), "languages": ["en", "fr"]}}
    cfg = with_rows(rows)
    xcfg.validate(cfg)
    assert xcfg.external.jobs(cfg) == [("one", "fr")]
    raw = json.loads((tiny[kind] / "config.json").read_text())
    assert ("num_hidden_layers" in raw) == (kind not in ("distilbert", "xlm"))  # the kinds that name it otherwise
    model = PretrainedModel.transformers(tiny[kind])
    unknown = model.load("cpu", ["fr"]).dictionary.tokenizer.unk_token
    assert [p for p in model.subwords("fr")(["guerre"])[0] if p != unknown]  # its tokenizer reads the text
    for m in (model, model.untrained(5)):
        enc = m.load("cpu", ["fr"])
        assert (enc.num_layers, enc.dim) == (4, 32)
        split, w2s = m.text("fr")
        from xling.analysis.represent import mean_pooled_layers

        assert mean_pooled_layers(enc, "fr", ["La guerre est célèbre ."], split, w2s, 32, 1).shape == (5, 1, 32)


def test_a_missing_directory_is_one_error_naming_the_key(tiny, tmp_path):
    rows = rows_of(tiny)
    rows["pair"]["models"]["fr"] = str(tmp_path / "camembert-base")
    rows["mbert"]["path"] = str(tmp_path / "nowhere")
    msg = problems(with_rows(rows))
    assert "'analysis.external_models.pair.models.fr'" in msg and "camembert-base: no such directory" in msg
    assert msg.count("analysis.external_models.mbert.path") == 1  # one directory, said once


def test_a_directory_that_is_no_encoder_is_refused(tiny, tmp_path):
    cases = {"no config": lambda d: (d / "config.json").unlink(),
             "no weights": lambda d: (d / "model.safetensors").unlink(),
             "no tokenizer": lambda d: [(d / f).unlink() for f in ("tokenizer.json", "vocab.txt")],
             "encoder-decoder": lambda d: _edit(d, is_encoder_decoder=True, model_type="marian"),
             "a decoder": lambda d: _edit(d, model_type="gpt2", architectures=["GPT2LMHeadModel"]),
             "unknown type": lambda d: _edit(d, model_type="no-such-model"),
             "cut weights": lambda d: _truncate(d / "model.safetensors"),
             "cut torch weights": lambda d: _as_torch_bin(d, cut=True)}
    expected = {"no config": "no config.json", "no weights": "no weights", "no tokenizer": "no tokenizer",
                "encoder-decoder": "an encoder-decoder model", "a decoder": "a decoder (gpt2",
                "unknown type": "transformers cannot read it",
                "cut weights": "model.safetensors: not a whole safetensors file",
                "cut torch weights": "pytorch_model.bin: not a whole torch.save archive"}
    for case, breaks in cases.items():
        d = tmp_path / case.replace(" ", "_")
        shutil.copytree(tiny["mbert"], d)
        breaks(d)
        rows = rows_of(tiny)
        rows["mbert"]["path"] = str(d)
        msg = problems(with_rows(rows))
        assert "'analysis.external_models.mbert.path'" in msg and expected[case] in msg, (case, msg)
    whole = tmp_path / "whole_torch"
    shutil.copytree(tiny["mbert"], whole)
    _as_torch_bin(whole, cut=False)
    rows = rows_of(tiny)
    rows["mbert"]["path"] = str(whole)
    xcfg.validate(with_rows(rows))  # an intact pytorch_model.bin is read


def _truncate(path, keep: float = 0.6):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _as_torch_bin(directory, cut: bool):
    """The directory's weights as torch.save writes pytorch_model.bin (a zip archive), cut short or whole."""
    import torch
    from safetensors.torch import load_file

    torch.save(load_file(str(directory / "model.safetensors")), directory / "pytorch_model.bin")
    (directory / "model.safetensors").unlink()
    if cut:
        _truncate(directory / "pytorch_model.bin")


def _edit(directory, **changes):
    path = directory / "config.json"
    cfg = json.loads(path.read_text())
    cfg.update(changes)
    path.write_text(json.dumps({k: v for k, v in cfg.items() if v is not None}))


def test_a_language_without_section5_data_or_the_source_is_refused(tiny):
    rows = rows_of(tiny)
    rows["mbert"]["languages"] = ["en", "fr", "sw", "ja"]  # the paper config downloads no Tatoeba for sw or ja
    msg = problems(with_rows(rows))
    # refused under the key that asks for the language, saying what is missing
    assert ("'analysis.external_models.mbert.languages': 'sw' has no Section 5 data: no Tatoeba sw-en "
            "(downloads tatoeba_sw and tatoeba_sw_eng)") in msg
    assert ("'analysis.external_models.mbert.languages': 'ja' has no Section 5 data: no Tatoeba ja-en "
            "(downloads tatoeba_ja and tatoeba_ja_eng) and no XNLI-15way column") in msg
    assert "mbert.path" not in msg
    rows = rows_of(tiny)
    rows["mbert"]["languages"] = ["fr", "de"]
    assert "the source language 'en' must be among its languages" in problems(with_rows(rows))


def test_a_monolingual_pair_of_other_depths_and_mixed_keys_are_refused(tiny, tmp_path):
    deeper = tmp_path / "deeper"
    shutil.copytree(tiny["camembert_fr"], deeper)
    _edit(deeper, num_hidden_layers=6)
    rows = rows_of(tiny)
    rows["pair"]["models"]["fr"] = str(deeper)
    msg = problems(with_rows(rows))
    assert "'analysis.external_models.pair.models.fr': 6 layers of width 32, the en model 4 of 32" in msg
    rows = rows_of(tiny)
    rows["pair"]["path"] = str(tiny["mbert"])
    assert "a monolingual row names one directory per language" in problems(with_rows(rows))
    rows = rows_of(tiny)
    rows["mbert"]["role"] = "bilingual"
    assert "analysis.external_models.mbert.role" in problems(with_rows(rows))
