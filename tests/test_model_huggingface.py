"""transformers checkpoints as the pipeline's encoders (xling.model): tiny BERT, CamemBERT, m-BERT
and XLM-R checkpoints, written offline by scripts/make_tiny_checkpoints.py, each loaded through the
one model type, reading raw text with its own tokenizer, giving every layer's states."""

import json

import pytest
import torch

from support.tiny_transformers import make_checkpoints, write_texts
from xling.analysis.represent import mean_pooled_layers
from xling.model import ModelSpec, PretrainedModel

LAYERS, DIM = 4, 32  # the script's size


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny-transformers")
    return make_checkpoints(root / "models", write_texts(root / "text"))


@pytest.mark.parametrize("name,model_type,lang", [("bert_en", "bert", "en"), ("camembert_fr", "camembert", "fr"),
                                                  ("mbert", "bert", "fr"), ("xlmr", "xlm-roberta", "en")])
def test_each_kind_reads_raw_text_into_every_layers_states(tiny, name, model_type, lang):
    from support.tiny_transformers import EN, FR

    assert json.loads((tiny[name] / "config.json").read_text())["model_type"] == model_type
    model = PretrainedModel.transformers(tiny[name])
    encoder = model.load("cpu", [lang])
    lines, subwords = model.text(lang)
    sentences = EN if lang == "en" else FR
    pieces = [p for words in lines(sentences) for word in subwords(words) for p in word]
    # the tokenizer knows its text: a tokenizer written wrong reads every word as unknown
    unknown = encoder.dictionary[encoder.dictionary.unk()]
    assert sum(p == unknown for p in pieces) < len(pieces) / 4, pieces[:20]
    states = mean_pooled_layers(encoder, lang, sentences, lines, subwords, max_seq_len=64, batch_size=2)
    assert states.shape == (1 + LAYERS, len(sentences), DIM) and torch.isfinite(torch.from_numpy(states)).all()
    assert encoder.max_positions() == 128 and list(encoder.language_specific_parameters(lang)) == []


@pytest.mark.parametrize("name", ["bert_en", "xlmr"])
def test_the_longest_input_the_model_embeds_is_encoded(tiny, name):
    """RoBERTa's family numbers positions from its padding index + 1: its longest input is its
    position table's rows less that offset (128 here), BERT's all its rows."""
    encoder = PretrainedModel.transformers(tiny[name]).load()
    d, n = encoder.dictionary, encoder.max_positions()
    tokens = torch.tensor([[d.bos(), *[d.unk()] * (n - 2), d.eos()]])
    assert len(encoder.encode(tokens, "en")) == 1 + LAYERS
    with pytest.raises(Exception):
        encoder.encode(torch.tensor([[d.bos(), *[d.unk()] * (n - 1), d.eos()]]), "en")


def test_a_sentence_pair_gets_segments_only_where_the_model_has_two(tiny):
    """BERT reads a pair's second sentence as segment 1; XLM-R has one segment (type_vocab_size 1),
    so a pair is read with none (segment 1 would index past its table)."""
    for name, segments in (("bert_en", 2), ("xlmr", 1)):
        encoder = PretrainedModel.transformers(tiny[name]).load()
        d = encoder.dictionary
        pair = torch.tensor([[d.bos(), d.unk(), d.eos(), d.unk(), d.unk(), d.eos()]])
        assert encoder.segments == segments
        assert encoder.encode(pair, "en")[-1].shape == (1, 6, DIM)
    bert = PretrainedModel.transformers(tiny["bert_en"]).load()
    a = bert.encode(pair, "en")[-1]
    bert.segments = 1  # the same pair read as one segment: BERT's second segment changes the states
    assert not torch.allclose(a, bert.encode(pair, "en")[-1])


def test_an_untrained_model_is_its_seeds_and_the_trained_one_its_files(tiny):
    from safetensors.torch import load_file

    model = PretrainedModel.transformers(tiny["xlmr"])
    trained = model.load()
    saved = load_file(str(tiny["xlmr"] / "model.safetensors"))
    w = trained.bert.embeddings.word_embeddings.weight
    assert torch.equal(w, next(v for k, v in saved.items() if k.endswith("embeddings.word_embeddings.weight")))
    a, b, c = (model.untrained(s).load().bert.embeddings.word_embeddings.weight for s in (5, 5, 6))
    assert torch.equal(a, b) and not torch.equal(a, c) and not torch.equal(a, w)
    assert model.untrained(5).drift() is None and model.drift() is None  # its initial weights are unknown


def test_a_model_read_as_a_language_and_its_digest(tiny):
    model = PretrainedModel.transformers(tiny["mbert"])
    spec = ModelSpec(model, "fr")
    assert spec.reads == "fr" and spec.checkpoint == tiny["mbert"] and spec.random_init_seed is None
    assert model.digest() != PretrainedModel.transformers(tiny["bert_en"]).digest()
    with pytest.raises(ValueError, match="kind"):
        PretrainedModel("onnx", tiny["mbert"])
