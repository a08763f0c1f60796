"""BERT's initialisation (``--param-init bert``) against fairseq's own ``init_bert_params`` on
fairseq's ``TransformerSentenceEncoder`` and its layer: the same values where the draw order is the
same (one layer from one generator state), the same per-tensor statistics on a whole encoder."""


import pytest
import torch
from fairseq.modules.transformer_sentence_encoder import TransformerSentenceEncoder
from fairseq.modules.transformer_sentence_encoder import init_bert_params as fairseq_init_bert_params
from fairseq.modules.transformer_sentence_encoder_layer import TransformerSentenceEncoderLayer

from support.tiny_checkpoint import BERT_OPTIONS
from xling.pretrain.encoder import MLMEncoder, build_layer, init_bert_params, paper_model_args

DIM, FFN, HEADS, LAYERS, VOCAB, PAD, POSITIONS = 64, 256, 4, 8, 500, 1, 64


def ours_by_fairseq_name(layer) -> dict[str, torch.Tensor]:
    """Our layer's tensors under the names of fairseq's ``TransformerSentenceEncoderLayer``."""
    q, k, v = layer.self_attn.in_proj_weight.detach().chunk(3)
    qb, kb, vb = layer.self_attn.in_proj_bias.detach().chunk(3)
    return {
        "self_attn.q_proj.weight": q, "self_attn.k_proj.weight": k, "self_attn.v_proj.weight": v,
        "self_attn.q_proj.bias": qb, "self_attn.k_proj.bias": kb, "self_attn.v_proj.bias": vb,
        "self_attn.out_proj.weight": layer.self_attn.out_proj.weight,
        "self_attn.out_proj.bias": layer.self_attn.out_proj.bias,
        "self_attn_layer_norm.weight": layer.norm1.weight, "self_attn_layer_norm.bias": layer.norm1.bias,
        "fc1.weight": layer.linear1.weight, "fc1.bias": layer.linear1.bias,
        "fc2.weight": layer.linear2.weight, "fc2.bias": layer.linear2.bias,
        "final_layer_norm.weight": layer.norm2.weight, "final_layer_norm.bias": layer.norm2.bias,
    }


@pytest.mark.parametrize("seed", [0, 7])
def test_bert_init_of_a_layer_has_fairseqs_values(seed):
    theirs = TransformerSentenceEncoderLayer(DIM, FFN, HEADS, activation_fn="gelu")
    ours = build_layer(DIM, HEADS, FFN, 0.1, 0.1, "gelu")
    torch.manual_seed(seed)
    theirs.apply(fairseq_init_bert_params)
    torch.manual_seed(seed)
    init_bert_params(ours)
    expected = dict(theirs.named_parameters())
    got = ours_by_fairseq_name(ours)
    assert set(got) == set(expected)
    for name, value in got.items():
        assert torch.equal(value.detach(), expected[name].detach()), name


def our_encoder(init: str) -> MLMEncoder:
    args = paper_model_args(encoder_layers=LAYERS, encoder_embed_dim=DIM, encoder_ffn_embed_dim=FFN,
                            encoder_attention_heads=HEADS, max_positions=POSITIONS, dropout=0.1, attention_dropout=0.1,
                            vocab_multiple=1, **{**BERT_OPTIONS, "activation_dropout": 0.1, "param_init": init})
    return MLMEncoder(args, VOCAB, PAD, 1, None)


def test_bert_init_statistics_match_fairseqs_encoder():
    """Every weight of ours has the std of fairseq's tensor of the same role (0.02, where torch's
    packed attention kept xavier's 0.088 at width 64 before), every bias is zero and every
    LayerNorm 1 and 0, as in fairseq's encoder."""
    torch.manual_seed(3)
    theirs = TransformerSentenceEncoder(PAD, VOCAB, LAYERS, DIM, FFN, HEADS, max_seq_len=POSITIONS, num_segments=0,
                                        encoder_normalize_before=True, apply_bert_init=True, activation_fn="gelu")
    torch.manual_seed(3)
    ours = our_encoder("bert")
    fs = dict(theirs.named_parameters())
    pairs = [("embed_tokens.weight", ours.embed_tokens[0].weight),
             ("embed_positions.weight", ours.embed_positions[0].weight),
             ("emb_layer_norm.weight", ours.emb_layer_norm[0].weight),
             ("emb_layer_norm.bias", ours.emb_layer_norm[0].bias)]
    for i, layer in enumerate(ours.shared_layers):
        pairs += [(f"layers.{i}.{name}", t) for name, t in ours_by_fairseq_name(layer).items()]
    assert len(pairs) == len(fs)
    for name, t in pairs:
        t, ref = t.detach(), fs[name].detach()
        if "norm" in name:  # LayerNorm: 1 and 0
            assert torch.equal(t, torch.ones_like(t) if name.endswith("weight") else torch.zeros_like(t)), name
            assert torch.equal(t, ref), name
        elif name.endswith("bias"):
            assert not t.any() and not ref.any(), name
        else:
            rows = [r for r in range(t.shape[0]) if not (name == "embed_tokens.weight" and r == PAD)]
            s, s_ref = float(t[rows].std()), float(ref[rows].std())
            assert abs(s - 0.02) < 0.05 * 0.02 and abs(s_ref - 0.02) < 0.05 * 0.02, (name, s, s_ref)
            assert abs(float(t[rows].mean())) < 0.002, name
    assert not ours.embed_tokens[0].weight[PAD].any() and not theirs.embed_tokens.weight[PAD].any()
    # the head fairseq's encoder lacks: BERT's dense layer and the tied bias
    assert abs(float(ours.lm_dense.weight.detach().std()) - 0.02) < 0.002 and not ours.lm_dense.bias.any()
    assert not ours.lm_bias.any()


def test_bert_init_draws_are_seeded():
    torch.manual_seed(11)
    a = our_encoder("bert").state_dict()
    torch.manual_seed(11)
    b = our_encoder("bert").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_bert_init_of_earlier_models_is_kept_under_its_own_name():
    """Models trained before this pipeline followed fairseq's init drew BERT's N(0, 0.02) for the
    Linear and Embedding layers only (torch's packed q/k/v kept xavier's std, 0.088 at width 64):
    ``bert_xavier_attention`` draws them so; a job tracks the config's ``init`` whatever it is (the
    schema's default is XLM's)."""
    from xling.config import REPO, load
    from xling.pretrain.job import ALL_SHARED, PretrainJob

    old = our_encoder("bert_xavier_attention")
    in_proj = old.shared_layers[0].self_attn.in_proj_weight.detach()
    assert abs(float(in_proj.std()) - (2 / (DIM + 3 * DIM)) ** 0.5) < 0.005
    assert abs(float(old.embed_tokens[0].weight.detach()[2:].std()) - 0.02) < 0.001
    cfg = load(REPO / "config" / "config.yaml")
    for init in ("bert", "bert_xavier_attention", "xlm"):  # every value tracked as the config gives it
        model = {**cfg["model"], "init": init}
        job = PretrainJob.build(["d"], ALL_SHARED, model, cfg["pretrain"], ["en"], 1)
        assert job.tracked()["model"]["init"] == init


@pytest.mark.parametrize("init,std", [("xlm", DIM ** -0.5), ("xlm_768", 768 ** -0.5)])
def test_xlm_init_scales_the_embeddings_by_the_width_or_the_papers(init, std):
    """XLM's N(0, dim^-1/2) embeddings are 0.125 at the testbed's width 64; ``xlm_768`` draws them at
    the paper's width's 0.036 instead, every other tensor as XLM's (the same draws in between)."""
    torch.manual_seed(5)
    enc = our_encoder(init)
    for table in (enc.embed_tokens[0].weight[PAD + 1:], enc.embed_positions[0].weight):
        assert abs(float(table.detach().std()) - std) < 0.05 * std, init
    assert float(enc.embed_tokens[0].weight.detach()[PAD].abs().max()) == 0.0  # the padding row
    torch.manual_seed(5)
    other = our_encoder("xlm" if init == "xlm_768" else "xlm_768")
    for (name, a), b in zip(enc.named_parameters(), other.parameters()):
        assert torch.equal(a, b) == (not name.startswith(("embed_tokens", "embed_positions"))), name
