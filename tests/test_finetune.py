"""Fine-tuning of the three tasks with a tiny real Transformer encoder on generated, learnable data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from fairseq.data import Dictionary
from torch import nn

# the toy tasks; test_finetune_real_encoder imports some of them from here
from support.toy_tasks import (  # noqa: F401,E501
    LANGS,
    SUFFIX,
    WORDS,
    files,
    finetune_one,
    job,
    make_ner,
    make_nli,
    make_ud,
    per_word,
    write_task_dir,
)
from xling.config import grid_cells, hp_id, load_yaml
from xling.errors import InputError
from xling.finetune.data import read_bio, read_nli
from xling.finetune.schedule import warmup_linear
from xling.model.encoder import Encoder, freeze_language_specific
from xling.model.text import WordEncoder


class TinyEncoder(nn.Module):
    """A small Transformer with the loader's interface: shared token embeddings and layers, and a
    language embedding per language (the language-specific parameters, as XLM's)."""

    def __init__(self, dim: int = 32, layers: int = 2, max_len: int = 64):
        super().__init__()
        self.dictionary = Dictionary()
        for w in WORDS:
            self.dictionary.add_symbol(w)
        self.languages = list(LANGS)
        self.dim, self.num_layers = dim, layers
        self.tokens = nn.Embedding(len(self.dictionary), dim, padding_idx=self.dictionary.pad())
        self.positions = nn.Embedding(max_len, dim)
        self.lang_embed = nn.ParameterDict({lang: nn.Parameter(torch.randn(dim) * 0.1) for lang in LANGS})
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True) for _ in range(layers)
        )

    def lang_id(self, lang: str) -> int:
        return self.languages.index(lang)

    def encode(self, tokens, lang, padding_mask=None):
        pos = torch.arange(tokens.size(1), device=tokens.device)
        x = self.tokens(tokens) + self.positions(pos) + self.lang_embed[lang]
        states = [x]
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=padding_mask)
            states.append(x)
        return states

    def shared_parameters(self):
        return [p for n, p in self.named_parameters() if not n.startswith("lang_embed")]

    def language_specific_parameters(self, lang):
        return [self.lang_embed[lang]]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    return write_task_dir(tmp_path_factory.mktemp("tasks"), seed=0, sizes={"train": 240, "dev": 60, "test": 60})


CASES = {
    # task: (hp, chance level of the metric, epochs)
    "xnli": ({"batch_size": 16, "encoder_lr": 1e-3, "classifier_lr": 3e-3}, 100 / 3, 4),
    "ner": ({"batch_size": 16, "lr": 3e-3}, 0.0, 4),
    "parsing": ({"batch_size": 16, "lr": 2e-3, "arc_mlp": 32, "label_mlp": 16}, 100 / 4, 4),
}


@pytest.mark.parametrize("task", list(CASES))
def test_tiny_finetune_learns_and_freezes_language_parameters(task, task_dir):
    torch.manual_seed(0)
    enc = TinyEncoder()
    assert isinstance(enc, Encoder)
    before_lang = {lang: enc.lang_embed[lang].detach().clone() for lang in LANGS}
    before_shared = enc.tokens.weight.detach().clone()
    hp, chance, epochs = CASES[task]
    res = finetune_one(job(task, hp, epochs, seed=3), enc, per_word, files(task_dir, task))
    # English dev well above chance, and the zero-shot target (same vocabulary here) too.
    assert res["en_dev"] > chance + 30, res["history"]
    assert res["tgt_test"] > chance + 20, res
    assert res["best_epoch"] == max(range(1, epochs + 1), key=lambda e: res["history"][e - 1]["en_dev"])
    assert res["en_dev"] == pytest.approx(max(h["en_dev"] for h in res["history"]))
    assert set(res["scores"]) == {"en_dev", "tgt_dev", "tgt_test"}
    assert res["truncated"]["train"] == 0
    # Language-specific parameters are frozen; shared ones were trained.
    for lang in LANGS:
        assert torch.equal(enc.lang_embed[lang].detach(), before_lang[lang])
    assert not torch.equal(enc.tokens.weight.detach(), before_shared)
    json.dumps(res)  # the record is JSON-serialisable


def test_target_language_parameters_are_used_at_test(task_dir):
    """Breaking only fr's language-specific parameters changes the fr score, not the English one."""
    torch.manual_seed(0)
    enc = TinyEncoder()
    hp, _, _ = CASES["ner"]
    with torch.no_grad():
        enc.lang_embed["fr"].mul_(0).add_(50.0)  # swamps the input for fr only
    res = finetune_one(job("ner", hp, 3, seed=3), enc, per_word, files(task_dir, "ner"))
    assert res["en_dev"] > 50
    assert res["tgt_test"] < res["en_dev"] - 20


def test_truncation_is_counted_and_all_words_scored(task_dir):
    torch.manual_seed(0)
    enc = TinyEncoder()
    hp, _, _ = CASES["parsing"]
    res = finetune_one(job("parsing", hp, 1, seed=1, max_seq_len=6), enc, per_word, files(task_dir, "parsing"))
    # Sentences have 3-7 words: with room for 4 words every longer one is cut.
    assert 0 < res["truncated"]["train"] < res["examples"]["train"]
    assert 0.0 <= res["tgt_test"] <= 100.0


def test_max_train_examples_caps_english_training(task_dir):
    torch.manual_seed(0)
    hp, _, _ = CASES["ner"]
    res = finetune_one(job("ner", hp, 1, seed=1, max_train_examples=32), TinyEncoder(), per_word,
                       files(task_dir, "ner"))
    assert res["examples"]["train"] == 32 and res["steps"] == 2  # 32 examples in batches of 16


def test_max_eval_examples_caps_dev_and_test_sets_only(task_dir):
    torch.manual_seed(0)
    hp, _, _ = CASES["ner"]
    full = finetune_one(job("ner", hp, 1, seed=1), TinyEncoder(), per_word, files(task_dir, "ner"))
    torch.manual_seed(0)
    capped = finetune_one(job("ner", hp, 1, seed=1, max_eval_examples=5), TinyEncoder(), per_word,
                      files(task_dir, "ner"))
    assert capped["examples"]["train"] == full["examples"]["train"]
    assert all(capped["examples"][k] == 5 < full["examples"][k] for k in ("en_dev", "tgt_test"))


def test_freeze_returns_only_shared_parameters():
    enc = TinyEncoder()
    trainable = freeze_language_specific(enc)
    ids = {id(p) for p in trainable}
    assert all(id(enc.lang_embed[lang]) not in ids for lang in LANGS)
    assert all(not enc.lang_embed[lang].requires_grad for lang in LANGS)
    assert id(enc.tokens.weight) in ids


def test_word_encoder_first_subwords_and_truncation():
    d = Dictionary()
    for s in ["ab@@", "c", "d", "e@@", "f@@", "g"]:
        d.add_symbol(s)
    split = {"abc": ["ab@@", "c"], "d": ["d"], "efg": ["e@@", "f@@", "g"]}
    enc = WordEncoder(d, lambda words: [split[w] for w in words], max_seq_len=16)
    e = enc.encode_words(["abc", "d", "efg"])
    assert e.ids == [d.bos(), d.index("ab@@"), d.index("c"), d.index("d"), d.index("e@@"), d.index("f@@"),
                     d.index("g"), d.eos()]
    assert e.first == [1, 3, 4] and not e.truncated
    short = WordEncoder(d, lambda words: [split[w] for w in words], max_seq_len=5).encode_words(["abc", "d", "efg"])
    assert len(short.ids) == 5 and short.first == [1, 3] and short.truncated
    pair = WordEncoder(d, lambda words: [split[w] for w in words], max_seq_len=6).encode_pair(["abc"], ["efg"])
    assert len(pair.ids) == 6 and pair.ids[-1] == d.eos() and pair.truncated


def test_warmup_linear_schedule_definition():
    total = 100
    values = [warmup_linear(s, total, 0.1) for s in range(total)]
    assert values[9] == pytest.approx(1.0) and values[0] == pytest.approx(0.1)
    assert all(a < b for a, b in zip(values[:9], values[1:10]))  # rising during warmup
    assert all(a > b for a, b in zip(values[10:], values[11:]))  # then falling
    assert values[-1] == pytest.approx(1 / 90) and warmup_linear(total, total, 0.1) == 0.0


def test_parser_label_bilinear_is_nn_bilinear():
    """The label scorer's matrix-product form gives nn.Bilinear's values and gradients."""
    from xling.finetune.heads import BiaffineParser

    torch.manual_seed(0)
    parser = BiaffineParser(16, num_labels=5, arc_mlp=8, label_mlp=6)
    nn.init.normal_(parser.label_bilinear.bias)
    dep, head = torch.randn(3, 4, 6, requires_grad=True), torch.randn(3, 4, 6, requires_grad=True)
    ours = parser._bilinear(dep, head)
    ref = parser.label_bilinear(dep, head)
    assert ours.shape == (3, 4, 5)
    torch.testing.assert_close(ours, ref)
    weights = torch.randn_like(ref)
    grads = [torch.autograd.grad((out * weights).sum(), [dep, head, parser.label_bilinear.weight,
                                                           parser.label_bilinear.bias]) for out in (ours, ref)]
    for g_ours, g_ref in zip(*grads):
        torch.testing.assert_close(g_ours, g_ref)


def test_paper_config_grid_is_what_finetune_accepts():
    """config/config.yaml plans the paper's grids; each cell is an hp dict a fine-tuning job understands."""
    cfg = load_yaml(Path(__file__).resolve().parents[1] / "config" / "config.yaml")["finetune"]
    sizes = {task: len(grid_cells(cfg[task])) for task in ("xnli", "ner", "parsing")}
    assert sizes == {"xnli": 18, "ner": 6, "parsing": 6}
    for task in sizes:
        for cell in grid_cells(cfg[task]):
            assert "batch_size" in cell and (("lr" in cell) != ("encoder_lr" in cell and "classifier_lr" in cell))
    assert len({hp_id(c) for c in grid_cells(cfg["xnli"])}) == 18


def test_a_cells_hyperparameters_keep_the_configs_keys_and_order():
    """The typed record of a cell gives back the mapping it was made from, in its order (a rule's
    params are compared by their repr), and the job comes back from its tracked form; a cell with
    neither one learning rate nor the encoder's and the head's, or with an unknown key, is refused."""
    from xling.finetune.job import FinetuneJob, Hyperparameters

    cell = {"lr": 2e-5, "batch_size": 16}  # not the schema's order
    hp = Hyperparameters.of(cell)
    assert (hp.batch_size, hp.lr, hp.split_lr) == (16, 2e-5, False)
    assert repr(hp.tracked()) == repr(cell)
    one = job("ner", cell, 1, seed=1)
    assert repr(one.tracked()["hp"]) == repr(cell) and FinetuneJob.from_tracked(one.tracked()) == one
    assert Hyperparameters.of({"batch_size": 8, "encoder_lr": 1e-5, "classifier_lr": 1e-4}).split_lr
    for bad in ({"batch_size": 8}, {"batch_size": 8, "encoder_lr": 1e-5},
                {"batch_size": 8, "lr": 1e-5, "encoder_lr": 1e-5, "classifier_lr": 1e-4},
                {"batch_size": 8, "lr": 1e-5, "arc_mlp": 32}, {"batch_size": 8, "lr": 1e-5, "momentum": 0.9}):
        with pytest.raises(ValueError):
            Hyperparameters.of(bad)


def test_bad_task_files_name_file_and_line(tmp_path):
    p = tmp_path / "train.tsv"
    p.write_text("premise\thypothesis\tlabel\na\tb\tentailment\na\tb\tmaybe\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"train\.tsv:3.*entailment\|neutral\|contradiction"):
        read_nli(p)
    b = tmp_path / "x.bio"
    b.write_text("Paris\tB-LOC\nis\tX-1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x\.bio:2"):
        read_bio(b)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_tiny_finetune_on_cuda(task_dir):
    torch.manual_seed(0)
    hp, chance, epochs = CASES["parsing"]
    res = finetune_one(job("parsing", hp, epochs, seed=3), TinyEncoder(), per_word, files(task_dir, "parsing"),
                       device="cuda")
    assert res["en_dev"] > chance + 30
