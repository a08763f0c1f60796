"""Parameter sharing of the Table 1 separation options (paper 4.3): per-language modules
have one copy per language, the rest is shared, and a step on one language leaves the
other language's parameters alone."""

import pytest
import torch

from support.inprocess import build
from support.toy_data import TINY_MODEL, TINY_PRETRAIN, write_toy_data
from xling.pretrain.command import fairseq_train_command

SETTINGS = {  # name: (separate embeddings, separate bottom layers)
    "default": (False, 0), "sep_emb": (True, 0), "sep_l1_3": (False, 3), "sep_l1_6": (False, 6),
    "sep_emb_l1_3": (True, 3), "sep_emb_l1_6": (True, 6),
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_toy_data(tmp_path_factory.mktemp("bin") / "en-fr", ["en", "fr"], n_train=60, seed=5)


def build_setting(data_dir, tmp_path, emb, layers):
    setting = {"separate": {"embeddings": emb, "layers": layers}}
    cmd = fairseq_train_command(data_dir, tmp_path, setting, TINY_MODEL, TINY_PRETRAIN, ["en", "fr"], 0, True, 1)
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
    cmd = fairseq_train_command(data_dir, tmp_path, setting, TINY_MODEL, TINY_PRETRAIN, ["en", "fr"], 0, True, 1)
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
