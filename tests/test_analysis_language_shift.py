"""Mean of language, mean difference shift and token translation (Liu et al. 2020, 4.1-4.2) on tiny
random models of both kinds: a transformers BertForMaskedLM and the project's encoder (also with
language layers). The shift must act exactly at its layer and leave no trace afterwards; means
must recover planted distributions and not depend on how the tokens are batched."""

from __future__ import annotations

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel

from support.tiny_checkpoint import BERT_OPTIONS
from xling.analysis.language_shift import (
    LanguageMeans,
    blocks,
    hidden_states,
    language_means,
    mean_difference,
    shift_at,
    token_mask,
)
from xling.analysis.language_shift import translate_tokens as translate
from xling.model.checkpoint import LoadedEncoder
from xling.pretrain.encoder import MLMEncoder, paper_model_args

VOCAB, DIM, LAYERS = 50, 16, 4
LANG_A, LANG_B = range(4, 27), range(27, 50)  # the token ids of two planted "languages"


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Models this small gain nothing from threads, and on a loaded machine torch's thread pool
    turns milliseconds into seconds per forward."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def bert_config() -> BertConfig:
    return BertConfig(vocab_size=VOCAB, hidden_size=DIM, num_hidden_layers=LAYERS, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=32)


def tiny_bert() -> BertForMaskedLM:
    torch.manual_seed(0)
    return BertForMaskedLM(bert_config()).eval()


def tiny_encoder(separate_layers: int = 0, vocab_masks: torch.Tensor | None = None) -> MLMEncoder:
    torch.manual_seed(0)
    args = paper_model_args(encoder_layers=LAYERS, encoder_embed_dim=DIM, encoder_ffn_embed_dim=32,
                            encoder_attention_heads=2, max_positions=32, separate_layers=separate_layers,
                            dropout=0.1, attention_dropout=0.1, **{**BERT_OPTIONS, "activation_dropout": 0.1})
    return MLMEncoder(args, VOCAB, padding_idx=1, n_languages=2, vocab_masks=vocab_masks).eval()


# (model, language id of the input, padding id, [CLS]-like id)
KINDS = {
    "bert": lambda: (tiny_bert(), 0, 0, 2),
    "encoder": lambda: (tiny_encoder(), 0, 1, 0),
    "encoder_language_layers": lambda: (tiny_encoder(separate_layers=2), 1, 1, 0),
}


def batch(pad: int, cls: int, ids=LANG_A, lengths=(10, 7, 4), seed: int = 1):
    """[CLS]-led sentences of ``ids`` padded to the longest: (input_ids, attention_mask)."""
    g = torch.Generator().manual_seed(seed)
    T = max(lengths)
    input_ids = torch.full((len(lengths), T), pad, dtype=torch.long)
    attention_mask = torch.zeros((len(lengths), T), dtype=torch.long)
    for b, n in enumerate(lengths):
        input_ids[b, 0] = cls
        input_ids[b, 1:n] = torch.tensor(ids)[torch.randint(len(ids), (n - 1,), generator=g)]
        attention_mask[b, :n] = 1
    return input_ids, attention_mask


def logits(model, input_ids, attention_mask, lang):
    with torch.no_grad():
        if isinstance(model, BertForMaskedLM):
            return model(input_ids=input_ids, attention_mask=attention_mask).logits
        features, _ = model.extract_features(input_ids, lang, padding_mask=~attention_mask.bool())
        return model.output_layer(features, lang)


def test_blocks_in_running_order():
    bert = tiny_bert()
    assert blocks(bert) == list(bert.bert.encoder.layer)
    bare = BertModel(bert_config())
    assert blocks(bare) == list(bare.encoder.layer)
    classifier = BertForSequenceClassification(bert_config())
    assert blocks(classifier) == list(classifier.bert.encoder.layer)
    enc = tiny_encoder(separate_layers=2)
    assert blocks(enc, 1) == [enc.language_layers[1][0], enc.language_layers[1][1], *enc.shared_layers]
    assert blocks(enc, 0)[0] is enc.language_layers[0][0] and blocks(enc, 0)[2:] == blocks(enc, 1)[2:]
    loaded = LoadedEncoder(enc, None, ["en", "fr"])
    assert blocks(loaded, "fr") == blocks(enc, 1)
    with pytest.raises(TypeError, match="Linear"):
        blocks(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="0..1"):
        blocks(enc, 2)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layer", [0, 2, LAYERS])
def test_the_shift_acts_at_its_layer_only(kind, layer):
    model, lang, pad, cls = KINDS[kind]()
    input_ids, attention_mask = batch(pad, cls)
    real = attention_mask.bool()
    before = hidden_states(model, input_ids, attention_mask, lang)
    assert len(before) == LAYERS + 1
    delta = torch.linspace(-2.0, 3.0, DIM)
    with shift_at(model, layer, delta, lang):
        after = hidden_states(model, input_ids, attention_mask, lang)
    for k in range(layer):
        torch.testing.assert_close(after[k], before[k], rtol=0, atol=0, msg=f"layer {k} before the shift")
    torch.testing.assert_close(after[layer][real], before[layer][real] + delta)
    for k in range(layer + 1, LAYERS + 1):
        assert not torch.allclose(after[k][real], before[k][real], atol=1e-3), f"layer {k} after the shift"


def test_the_shift_shows_in_bert_hidden_states_whichever_hook_comes_first():
    """transformers records hidden_states with its own hooks, installed at the first call that asks
    for them: here that call happens inside the shift."""
    model = tiny_bert()
    input_ids, attention_mask = batch(0, 2)
    delta = torch.ones(DIM)
    with shift_at(model, 2, delta):
        shifted = hidden_states(model, input_ids, attention_mask)
    plain = hidden_states(model, input_ids, attention_mask)
    torch.testing.assert_close(shifted[2], plain[2] + delta)
    torch.testing.assert_close(shifted[1], plain[1], rtol=0, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_zero_shift_changes_no_logit(kind):
    model, lang, pad, cls = KINDS[kind]()
    input_ids, attention_mask = batch(pad, cls)
    plain = logits(model, input_ids, attention_mask, lang)
    # bit for bit with BERT; torch runs a hooked TransformerEncoderLayer off its fused fast path,
    # equal to float rounding only
    exact = dict(rtol=0, atol=0) if kind == "bert" else dict(rtol=0, atol=1e-6)
    with shift_at(model, 2, torch.zeros(DIM), lang):
        torch.testing.assert_close(logits(model, input_ids, attention_mask, lang), plain, **exact)
    shift = torch.randn(LAYERS + 1, DIM, generator=torch.Generator().manual_seed(3))
    for layer in (0, 2, LAYERS):
        got = translate(model, input_ids, attention_mask, layer, 0.0, shift, lang)
        assert got.dtype == torch.long and got.shape == input_ids.shape
        assert torch.equal(got, plain.argmax(-1))


@pytest.mark.parametrize("kind", KINDS)
def test_the_hook_is_removed_on_exit_and_on_error(kind):
    model, lang, pad, cls = KINDS[kind]()
    input_ids, attention_mask = batch(pad, cls)
    block = blocks(model, lang)[1]
    hooks = len(block._forward_hooks)
    plain = logits(model, input_ids, attention_mask, lang)
    with shift_at(model, 2, torch.full((DIM,), 5.0), lang):
        assert not torch.allclose(logits(model, input_ids, attention_mask, lang), plain)
    torch.testing.assert_close(logits(model, input_ids, attention_mask, lang), plain, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="inside"):
        with shift_at(model, 2, torch.full((DIM,), 5.0), lang):
            raise RuntimeError("inside")
    assert len(block._forward_hooks) == hooks
    torch.testing.assert_close(logits(model, input_ids, attention_mask, lang), plain, rtol=0, atol=0)


def test_bad_shift_arguments_are_refused():
    model = tiny_bert()
    with pytest.raises(ValueError, match=r"hidden size \[16\]"):
        with shift_at(model, 1, torch.zeros(DIM + 1)):
            pass
    for layer in (-1, LAYERS + 1):
        with pytest.raises(ValueError, match=f"0..{LAYERS}"):
            with shift_at(model, layer, torch.zeros(DIM)):
                pass
    with pytest.raises(ValueError, match="NaN"):
        with shift_at(model, 1, torch.full((DIM,), float("nan"))):
            pass
    with pytest.raises(TypeError, match="MLM head.*BertModel"):
        translate(BertModel(bert_config()), *batch(0, 2), 1, 1.0, torch.zeros(DIM))
    with pytest.raises(ValueError, match="shape"):
        translate(model, *batch(0, 2), 1, 1.0, torch.zeros(2, 2, DIM))


def planted(mu: torch.Tensor, lengths: list[int], g: torch.Generator):
    """Hidden states [L + 1, B, T, D] ~ N(mu[l], 1) at real tokens, 1e6 at padding; and the mask."""
    T = max(lengths)
    states = mu[:, None, None, :] + torch.randn(mu.shape[0], len(lengths), T, mu.shape[1], generator=g)
    mask = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]
    states[:, ~mask] = 1e6
    return states, mask


def test_mean_difference_recovers_planted_means_and_ignores_padding():
    g = torch.Generator().manual_seed(0)
    mu1, mu2 = 3 * torch.randn(LAYERS + 1, 8, generator=g), 3 * torch.randn(LAYERS + 1, 8, generator=g)
    means = []
    for mu in (mu1, mu2):
        acc = LanguageMeans()
        for _ in range(20):
            lengths = torch.randint(5, 40, (16,), generator=g).tolist()
            acc.add(*planted(mu, lengths, g))
        assert acc.count > 4000
        means.append(acc.mean())
    assert means[0].dtype == torch.float64 and means[0].shape == (LAYERS + 1, 8)
    torch.testing.assert_close(means[0], mu1.double(), rtol=0, atol=0.1)
    torch.testing.assert_close(mean_difference(*means), (mu2 - mu1).double(), rtol=0, atol=0.1)
    torch.testing.assert_close(mean_difference(means[0].numpy(), means[1].numpy()), means[1] - means[0])
    with pytest.raises(ValueError, match="same shape"):
        mean_difference(means[0], means[1][:2])


def test_streamed_means_equal_the_one_shot_mean():
    g = torch.Generator().manual_seed(1)
    lengths = [12, 3, 7, 1, 9, 12, 5, 2, 8, 4]
    states, mask = planted(torch.randn(LAYERS + 1, 8, generator=g), lengths, g)
    whole = LanguageMeans()
    whole.add(list(states), mask)
    streamed = LanguageMeans()
    for lo, hi in [(0, 1), (1, 4), (4, 10)]:  # batches of 1, 3 and 6 sentences, each padded to its own longest
        T = max(lengths[lo:hi])
        streamed.add(states[:, lo:hi, :T], mask[lo:hi, :T])
    assert streamed.count == whole.count == sum(lengths)
    torch.testing.assert_close(streamed.mean(), whole.mean(), rtol=1e-12, atol=1e-12)
    by_definition = states[:, mask].double().mean(dim=1)  # [L + 1, D] over the real tokens
    torch.testing.assert_close(whole.mean(), by_definition, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="no token"):
        LanguageMeans().mean()
    with pytest.raises(ValueError, match=r"\[L \+ 1, D\]"):
        streamed.add(states[:2], mask)


def test_language_means_of_a_model_count_the_masked_tokens():
    model = tiny_bert()
    input_ids, attention_mask = batch(0, 2)
    states = hidden_states(model, input_ids, attention_mask)
    keep = attention_mask.bool() & (input_ids != 2)
    expected = torch.stack([h[keep].double().mean(dim=0) for h in states])
    got = language_means(model, [(input_ids, attention_mask)], exclude_ids=[2])
    torch.testing.assert_close(got, expected)
    with_specials = language_means(model, [(input_ids, attention_mask)])
    torch.testing.assert_close(with_specials, torch.stack([h[attention_mask.bool()].double().mean(0) for h in states]))
    assert torch.equal(token_mask(input_ids, attention_mask, [2]), keep)


@pytest.mark.parametrize("kind", KINDS)
def test_translation_at_the_last_layer_is_the_head_on_shifted_states(kind):
    """D from the means of two planted token ranges; at the last layer the prediction is the MLM
    head on h + alpha * D, alpha = 0 gives the plain argmax, a large alpha changes it."""
    model, lang, pad, cls = KINDS[kind]()
    a = batch(pad, cls, LANG_A, seed=1)
    D = mean_difference(language_means(model, [a], lang), language_means(model, [batch(pad, cls, LANG_B)], lang))
    plain = logits(model, *a, lang).argmax(-1)
    assert torch.equal(translate(model, *a, LAYERS, 0.0, D, lang), plain)
    alpha = 20.0 / float(D[LAYERS].norm())  # a shift of length 20 at the last layer
    got = translate(model, *a, LAYERS, alpha, D, lang)
    last = hidden_states(model, *a, lang)[LAYERS] + (alpha * D[LAYERS]).float()
    with torch.no_grad():
        head = model.cls(last) if isinstance(model, BertForMaskedLM) else model.output_layer(last, lang)
    assert torch.equal(got, head.argmax(-1))
    assert (got != plain)[a[1].bool()].float().mean() > 0.2
    # the per-layer shift is read at its layer's row (a random model's rows point alike: plant one)
    only_layer_2 = torch.zeros_like(D)
    only_layer_2[2] = 20.0 * D[2] / D[2].norm()
    via_rows = translate(model, *a, 2, 1.0, only_layer_2, lang)
    assert torch.equal(via_rows, translate(model, *a, 2, 1.0, only_layer_2[2], lang))
    assert not torch.equal(via_rows, plain)


def test_encoder_translation_predicts_with_the_output_language():
    masks = torch.zeros(2, VOCAB, dtype=torch.bool)
    masks[0, list(LANG_A)] = True
    masks[1, list(LANG_B)] = True
    model = tiny_encoder(vocab_masks=masks)
    input_ids, attention_mask = batch(1, 0)
    assert set(translate(model, input_ids, attention_mask, 2, 1.0, torch.zeros(DIM)).unique().tolist()) <= set(LANG_A)
    out = translate(model, input_ids, attention_mask, 2, 1.0, torch.zeros(DIM), lang=0, out_lang=1)
    assert set(out.unique().tolist()) <= set(LANG_B)
