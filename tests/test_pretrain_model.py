"""Parameter sharing of the Table 1 separation options (paper 4.3): per-language modules
have one copy per language, the rest is shared, and a step on one language leaves the
other language's parameters alone."""

import pytest
import torch

from support.inprocess import build
from support.toy_data import BERT_MODEL, TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command
from xling.pretrain.job import PretrainJob

SETTINGS = {  # name: (separate embeddings, separate bottom layers)
    "default": (False, 0), "sep_emb": (True, 0), "sep_l1_3": (False, 3), "sep_l1_6": (False, 6),
    "sep_emb_l1_3": (True, 3), "sep_emb_l1_6": (True, 6),
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=60, seed=5)


def build_setting(data_dir, tmp_path, emb, layers):
    setting = {"separate": {"embeddings": emb, "layers": layers}}
    job = PretrainJob.build(data_dir, setting, TINY_MODEL, TINY_PRETRAIN, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path)
    return build(cmd)


def n_params(params):
    return sum(p.numel() for p in params)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_parameter_accounting(data_dir, tmp_path, name):
    emb, layers = SETTINGS[name]
    _, task, model, _ = build_setting(data_dir, tmp_path, emb, layers)
    _, _, base, _ = build_setting(data_dir, tmp_path, False, 0)
    enc = model.encoder
    assert len(enc.embed_tokens) == (2 if emb else 1) and len(enc.embed_positions) == (2 if emb else 1)
    assert [len(l) for l in enc.language_layers] == [layers, layers]
    assert len(enc.shared_layers) == TINY_MODEL["layers"] - layers
    en, fr, shared = (enc.language_specific_parameters(0), enc.language_specific_parameters(1),
                      enc.shared_parameters())
    ids = lambda ps: {id(p) for p in ps}  # noqa: E731
    # disjoint, and together exactly the model's parameters
    assert not ids(en) & ids(fr) and not (ids(en) | ids(fr)) & ids(shared)
    assert ids(en) | ids(fr) | ids(shared) == ids(model.parameters())
    assert n_params(en) == n_params(fr)
    # one extra copy of the separated modules compared with the fully shared model
    layer_size = n_params(base.encoder.shared_layers[0].parameters())
    emb_size = n_params(list(base.encoder.embed_tokens.parameters()) + list(base.encoder.embed_positions.parameters())
                        + list(base.encoder.emb_layer_norm.parameters()))
    assert n_params(en) == layers * layer_size + (emb_size if emb else 0)
    assert n_params(model.parameters()) == n_params(base.parameters()) + n_params(en)
    # the softmax is tied to the input embeddings of the batch language
    assert enc.vocab_mask is not None if emb else enc.vocab_mask is None


@pytest.mark.parametrize("name", ["sep_emb", "sep_l1_3", "sep_emb_l1_6"])
def test_step_on_one_language_leaves_the_other_alone(data_dir, tmp_path, name):
    emb, layers = SETTINGS[name]
    _, task, model, criterion = build_setting(data_dir, tmp_path, emb, layers)
    task.load_dataset("train_en")
    ds = task.dataset("train_en")
    sample = ds.collater([ds[i] for i in range(8)])
    assert sample["net_input"]["src_lang_id"].eq(0).all()
    enc = model.encoder
    before_fr = [p.detach().clone() for p in enc.language_specific_parameters(1)]
    before_en = [p.detach().clone() for p in enc.language_specific_parameters(0)]
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    loss, sample_size, _ = criterion(model, sample)
    (loss / sample_size).backward()
    assert all(p.grad is None or not p.grad.any() for p in enc.language_specific_parameters(1))
    if emb:
        # language-specific softmax: rows of tokens outside en's vocabulary get no gradient
        # (<mask> is not predicted but is an input)
        grad = enc.embed_tokens[0].weight.grad
        untouched = ~enc.vocab_mask[0]
        untouched[task.mask_idx] = False
        assert untouched.sum() > 20 and not grad[untouched].any() and grad[enc.vocab_mask[0]].any()
    opt.step()
    assert all(torch.equal(a, b) for a, b in zip(before_fr, enc.language_specific_parameters(1)))
    assert any(not torch.equal(a, b) for a, b in zip(before_en, enc.language_specific_parameters(0)))


def test_mixed_language_batch_is_refused(data_dir, tmp_path):
    _, task, model, _ = build_setting(data_dir, tmp_path, True, 0)
    tokens = torch.full((2, 5), 10)
    with pytest.raises(ValueError, match="one language"):
        model(tokens, src_lang_id=torch.tensor([0, 1]))
    logits, extra = model(tokens, src_lang_id=torch.tensor([1, 1]), return_all_hiddens=True)
    assert len(extra["inner_states"]) == 1 + TINY_MODEL["layers"]
    # fr's softmax never predicts an en-only word (logits cover the dictionary, the mask every row)
    assert torch.isinf(logits[..., ~model.encoder.vocab_mask[1][: model.encoder.vocab_size]]).all()


def test_shared_positions_separate_only_the_token_embeddings(data_dir, tmp_path):
    """The "fake language" option: one positional embedding and LayerNorm for both languages,
    so a step on en moves them, while fr's token embeddings stay as they were."""
    setting = {"separate": {"embeddings": True, "positions": False, "layers": 0}}
    job = PretrainJob.build(data_dir, setting, BERT_MODEL, TINY_PRETRAIN, ["en", "fr"], 1)
    cmd = fairseq_train_command(job, tmp_path)
    assert "--shared-positions" in cmd
    _, task, model, criterion = build(cmd)
    enc = model.encoder
    assert len(enc.embed_tokens) == 2 and len(enc.embed_positions) == 1 and len(enc.emb_layer_norm) == 1
    assert {id(p) for p in enc.language_specific_parameters(1)} == {id(p) for p in enc.embed_tokens[1].parameters()}
    task.load_dataset("train_en")
    ds = task.dataset("train_en")
    sample = ds.collater([ds[i] for i in range(8)])
    pos_before = enc.embed_positions[0].weight.detach().clone()
    fr_before = enc.embed_tokens[1].weight.detach().clone()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    loss, sample_size, _ = criterion(model, sample)
    (loss / sample_size).backward()
    opt.step()
    assert not torch.equal(pos_before, enc.embed_positions[0].weight)
    assert torch.equal(fr_before, enc.embed_tokens[1].weight)
    # both languages read the one positional table
    tokens = torch.full((1, 5), 10)
    model.eval()
    for lang in (0, 1):
        _, extra = model(tokens, src_lang_id=torch.tensor([lang]), features_only=True, return_all_hiddens=True)
        emb_only = enc.emb_layer_norm[0](enc.embed_tokens[lang](tokens) + enc.embed_positions[0].weight[:5][None])
        assert torch.allclose(extra["inner_states"][0], emb_only)


# -- XLM's model (docs/reading.md): language embeddings, the tied head, LayerNorm eps, FFN dropout, init --------
XLM_MODEL = {**TINY_MODEL, "language_embeddings": True, "mlm_head": "xlm", "layer_norm_eps": 1e-12,
             "activation_dropout": 0.0, "init": "xlm"}


def build_model(data_dir, tmp_path, model, emb=False, layers=0, languages=("en", "fr")):
    setting = {"separate": {"embeddings": emb, "layers": layers}}
    job = PretrainJob.build(data_dir, setting, model, TINY_PRETRAIN, list(languages), 1)
    cmd = fairseq_train_command(job, tmp_path)
    return build(cmd)


def test_language_embeddings_are_added_to_every_token_then_normalised(data_dir, tmp_path):
    """Layer 0 is LayerNorm(token + position + language embedding), as XLM's ``fwd``; the MLM head
    is the tied softmax alone: logits = h E^T + b. Computed by hand from the weights."""
    _, _, model, _ = build_model(data_dir, tmp_path, XLM_MODEL)
    enc = model.encoder.eval()
    assert enc.embed_languages.weight.shape == (2, TINY_MODEL["dim"])
    assert not hasattr(enc, "lm_dense") and not hasattr(enc, "lm_layer_norm")
    tokens = torch.tensor([[0, 11, 12, 13, 2], [0, 14, 15, 2, 1]])  # <s> ... </s>, one padded
    torch.nn.init.normal_(enc.embed_languages.weight)  # rows far apart, so a wrong row would show
    ln = enc.emb_layer_norm[0]
    assert ln.eps == 1e-12
    for lang in (0, 1):
        logits, extra = model(tokens, src_lang_id=torch.tensor([lang, lang]), return_all_hiddens=True)
        x = (enc.embed_tokens[0].weight[tokens] + enc.embed_positions[0].weight[: tokens.size(1)][None]
             + enc.embed_languages.weight[lang])
        mean, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
        layer0 = (x - mean) / torch.sqrt(var + 1e-12) * ln.weight + ln.bias
        layer0 = layer0.masked_fill(tokens.eq(1).unsqueeze(-1), 0.0)
        torch.testing.assert_close(extra["inner_states"][0], layer0, rtol=1e-5, atol=1e-5)
        top = extra["inner_states"][-1]
        n = enc.vocab_size  # the rows that pad the table to a multiple of 64 are no token's
        torch.testing.assert_close(logits, top @ enc.embed_tokens[0].weight[:n].T + enc.lm_bias[:n], rtol=1e-5,
                                   atol=1e-5)
    other, _ = model(tokens, src_lang_id=torch.tensor([0, 0]), features_only=True)
    assert not torch.allclose(other, model(tokens, src_lang_id=torch.tensor([1, 1]), features_only=True)[0])


def test_a_step_on_one_language_trains_its_language_row_only(data_dir, tmp_path):
    """The language embedding table is shared, each batch's row alone gets a gradient; a batch of
    two languages is refused (it has one language id)."""
    _, task, model, criterion = build_model(data_dir, tmp_path, XLM_MODEL)
    task.load_dataset("train_en")
    ds = task.dataset("train_en")
    sample = ds.collater([ds[i] for i in range(8)])
    model.train()
    loss, sample_size, _ = criterion(model, sample)
    (loss / sample_size).backward()
    grad = model.encoder.embed_languages.weight.grad
    assert grad[0].abs().sum() > 0 and not grad[1].any()
    assert any(p is model.encoder.embed_languages.weight for p in model.encoder.shared_parameters())
    with pytest.raises(ValueError, match="one language"):
        model(torch.full((2, 5), 10), src_lang_id=torch.tensor([0, 1]))


def test_one_language_model_has_no_language_embedding(data_dir, tmp_path):
    _, _, model, _ = build_model(data_dir, tmp_path, XLM_MODEL, languages=("en",))
    assert model.encoder.embed_languages is None


def test_xlm_layer_norm_eps_and_no_dropout_after_the_ffn_activation(data_dir, tmp_path):
    _, _, xlm, _ = build_model(data_dir, tmp_path, XLM_MODEL)
    _, _, old, _ = build_model(data_dir, tmp_path, BERT_MODEL)
    for layer in xlm.encoder.shared_layers:
        assert layer.norm1.eps == layer.norm2.eps == 1e-12
        assert layer.dropout.p == 0.0 and layer.dropout1.p == layer.dropout2.p == TINY_MODEL["dropout"]
    # BERT's model: torch's eps and the layers' dropout after the activation, BERT's head
    layer = old.encoder.shared_layers[0]
    assert layer.norm1.eps == 1e-5 and layer.dropout.p == TINY_MODEL["dropout"]
    assert old.encoder.lm_layer_norm.eps == 1e-5 and old.encoder.embed_languages is None


def test_xlm_initialisation(data_dir, tmp_path):
    """XLM: embeddings N(0, dim^-1/2) with a zero padding row, linear layers U(+-1/sqrt(fan_in))
    (biases too), LayerNorm 1 and 0; BERT: N(0, 0.02) and zero biases."""
    torch.manual_seed(0)
    _, _, xlm, _ = build_model(data_dir, tmp_path, XLM_MODEL)
    _, _, bert, _ = build_model(data_dir, tmp_path, {**XLM_MODEL, "init": "bert"})
    dim = TINY_MODEL["dim"]
    for enc, std in ((xlm.encoder, dim ** -0.5), (bert.encoder, 0.02)):
        table = enc.embed_tokens[0].weight[: enc.vocab_size]
        assert not table[enc.padding_idx].any()
        assert abs(float(table.detach().std()) - std) < 0.1 * std
        assert abs(float(enc.embed_positions[0].weight.detach().std()) - std) < 0.1 * std
    layer = xlm.encoder.shared_layers[0]
    for w, fan_in in ((layer.self_attn.in_proj_weight, dim), (layer.linear1.weight, dim),
                      (layer.linear2.weight, TINY_MODEL["ffn_dim"]), (layer.linear2.bias, TINY_MODEL["ffn_dim"]),
                      (layer.self_attn.out_proj.bias, dim), (xlm.encoder.lm_bias, dim)):
        bound = fan_in ** -0.5
        assert float(w.detach().abs().max()) <= bound and float(w.detach().abs().max()) > 0.8 * bound
    blayer = bert.encoder.shared_layers[0]
    assert not blayer.linear1.bias.any() and not bert.encoder.lm_bias.any()
    assert abs(float(blayer.linear1.weight.detach().std()) - 0.02) < 0.002
    assert torch.equal(layer.norm1.weight, torch.ones(dim)) and not layer.norm1.bias.any()


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_training_loss_of_xlms_model_is_that_of_its_logits(data_dir, tmp_path, lang):
    """The step's loss (the encoder's own mlm_loss, on the predicted positions' index) is the
    cross-entropy of the logits checked by hand above, with the batch language's embedding."""
    _, task, model, _ = build_model(data_dir, tmp_path, XLM_MODEL)
    model.eval()  # no dropout: the two forwards see the same states
    task.load_dataset(f"train_{lang}")
    ds = task.dataset(f"train_{lang}")
    sample = ds.collater([ds[i] for i in range(8)])
    loss, n, _ = task.mlm_loss(model, sample)
    target, pad = sample["target"], task.source_dictionary.pad()
    masked = target.ne(pad)
    logits, _ = model(sample["net_input"]["src_tokens"], src_lang_id=sample["net_input"]["src_lang_id"],
                      masked_tokens=masked)
    assert n == int(masked.sum()) > 0
    torch.testing.assert_close(loss, torch.nn.functional.cross_entropy(logits, target[masked], reduction="sum"),
                               rtol=1e-5, atol=1e-4)
