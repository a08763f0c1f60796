"""What a paper run depends on, pinned: every value of config/config.yaml that Wu et al. (2020)
state, beside the sentence that states it (pretraining's are pinned in its command:
test_pretrain_command.test_paper_hyperparameters), and every choice made "with the English dev
set" tested where it leaves its function, on a planted case where the target language would
choose otherwise."""

from __future__ import annotations

import json

import pytest

from xling.config import REPO, load
from xling.report import table1_from_results

PAPER = load(REPO / "config" / "config.yaml")
TEXT = REPO.parent / "shared" / "papers" / "wu2020_emerging_crosslingual_structure.sections1-4.md"

# (key path, the paper's value, the paper's words): Section 3.1, 3.2 and 4
STATED = [
    (("pretrain", "mask_prob"), 0.15, "mask 15% of the input tokens"),
    (("pretrain", "leave_unmasked_prob"), 0.1, "10% of the time with the original word"),
    (("pretrain", "random_token_prob"), 0.1, "10% of the time with a random word"),
    (("pretrain", "sampling_alpha"), 0.7, "exponentiated to the power 0.7"),
    (("pretrain", "one_language_batches"), True, "we sample a batch of continuous streams of text from one language"),
    (("model", "tokens_per_sample"), 256, "continuous streams of 256 tokens"),
    (("codeswitch", "dictionary"), "panlex", "sample word translations from PanLex"),
    (("codeswitch", "replace_prob"), 0.3, "randomly replace it with one of the possible translations from the "
                                          "dictionary (30% of the time)"),
    (("codeswitch", "max_fraction"), 0.15, "We change at most 15% of the words in a batch"),
    (("finetune", "top_k"), 2, "We report the result on average of best two set of hyperparameters"),
    (("finetune", "xnli", "epochs"), 200, "200 epochs for NLI"),
    (("finetune", "xnli", "grid", "batch_size"), [4, 8], "For XNLI, we search: batch size {4, 8}"),
    (("finetune", "xnli", "grid", "encoder_lr"), [1.25e-6, 2.5e-6, 5e-6],
     "encoder learning rate {1.25e-6, 2.5e-6, 5e-6}"),
    (("finetune", "xnli", "grid", "classifier_lr"), [5e-6, 2.5e-5, 1.25e-4],
     "classifier learning rate {5e-6, 2.5e-5, 1.25e-4}"),
    (("finetune", "xnli", "schedule"), "constant", "We use Adam with fixed learning rate for XNLI"),
    (("finetune", "ner", "epochs"), 10, "We fine-tune the model for 10 epochs for NER and Parsing"),
    (("finetune", "parsing", "epochs"), 10, "We fine-tune the model for 10 epochs for NER and Parsing"),
    *[((("finetune", t, "grid", "batch_size")), [16, 32], "batch size {16, 32}") for t in ("ner", "parsing")],
    *[((("finetune", t, "grid", "lr")), [2e-5, 3e-5, 5e-5], "learning rate {2e-5, 3e-5, 5e-5}")
      for t in ("ner", "parsing")],
    *[((("finetune", t, "schedule")), "warmup_linear",
       "warmup the learning rate for the first 10% batch then decrease linearly to 0 for NER and Parsing")
      for t in ("ner", "parsing")],
    *[((("finetune", t, "warmup_fraction")), 0.1, "for the first 10% batch") for t in ("ner", "parsing")],
    (("finetune", "ner", "datasets"), {"fr": "wikiann", "ru": "wikiann", "zh": "levow"},
     "We use WikiAnn (Pan et al., 2017), a silver NER dataset built automatically from Wikipedia, for "
     "English-Russian and English-French. For English-Chinese, we use CoNLL 2003 English"),
    (("finetune", "parsing", "treebanks"), {"en": "UD_English-EWT", "fr": "UD_French-GSD", "ru": "UD_Russian-GSD",
                                            "zh": "UD_Chinese-GSD", "de": "UD_German-GSD"},
     "English-EWT, French-GSD, Russian-GSD, and Chinese-GSD"),
    (("pairs",), ["en-fr", "en-ru", "en-zh"], "English-French, English-Russian, and English-Chinese"),
    (("source_language",), "en", "fine-tune the pre-trained model on English"),
]


def value(cfg: dict, path: tuple[str, ...]):
    for key in path:
        cfg = cfg[key]
    return cfg


@pytest.mark.parametrize("path,expected,words", STATED, ids=[".".join(p) for p, _, _ in STATED])
def test_a_value_the_paper_states_is_the_paper_configs(path, expected, words):
    got = value(PAPER, path)
    numeric = isinstance(expected, float) or (isinstance(expected, list) and all(
        isinstance(x, float) for x in expected))
    assert got == (pytest.approx(expected) if numeric else expected), f"{'.'.join(path)}: {got!r}, the paper: {words!r}"


@pytest.mark.skipif(not TEXT.exists(), reason="the paper's text is not beside this checkout (../shared/papers)")
def test_each_value_is_quoted_from_the_paper():
    text = " ".join(TEXT.read_text(encoding="utf-8").split())
    missing = [words for _, _, words in STATED if words not in text]
    assert not missing, missing


def test_table1_keeps_the_best_two_cells_by_english_dev_not_by_the_target(tmp_path):
    """Planted: the cells best on the target (fr) test are the worst on English dev; Table 1's
    number is the mean target score of the two best on English dev."""
    cells = {"a": (80.0, 10.0), "b": (70.0, 20.0), "c": (60.0, 90.0), "d": (50.0, 95.0)}  # hp: (en dev, fr test)
    for hp, (en_dev, tgt) in cells.items():
        path = tmp_path / "default" / "en-fr" / "seed1" / "xnli" / hp / "seed1" / "result.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"en_dev": en_dev, "tgt_test": tgt}), encoding="utf-8")
    _, table = table1_from_results(tmp_path, ["default"], {"default": "Default"}, ["en-fr"], ["xnli"],
                                   top_k=PAPER["finetune"]["top_k"])
    assert table.values[("default", "xnli", "fr")] == pytest.approx((10.0 + 20.0) / 2)  # by target: 92.5


def test_figure5_keeps_the_best_cells_by_english_dev_not_by_the_target(monkeypatch, tmp_path):
    """Figure 5's transfer (xling.analysis.transfer.run_transfer): the number it returns per target
    is the mean over the ``top_k`` cells best on English dev; planted scores where the target's best
    cells are English's worst (training and scoring replaced by the planted numbers)."""
    import dataclasses

    import xling.analysis.transfer as transfer
    import xling.finetune.examples as examples
    import xling.finetune.loop as loop
    from xling.finetune.job import FinetuneJob, Hyperparameters

    grid = [{"batch_size": 16, "lr": lr} for lr in (1e-5, 2e-5, 3e-5)]
    planted = {1e-5: {"en": 70.0, "fr": 5.0}, 2e-5: {"en": 60.0, "fr": 15.0}, 3e-5: {"en": 50.0, "fr": 99.0}}

    def evaluate(task, encoder, head, items, lang, device, batch_size=32):
        return {task.metric: planted[float(task.hp.lr)][lang]}

    def load_split(job, task, name, *a, **k):  # no file read: "train" fits the labels of an empty training set
        if name == "train":
            task.fit_labels([])
        return [], 0

    monkeypatch.setattr(examples, "load_split", load_split)
    monkeypatch.setattr(loop, "train_cells", lambda jobs, *a, **k: [{"best_epoch": 1}])
    monkeypatch.setattr(loop, "evaluate", evaluate)
    monkeypatch.setattr(transfer, "StackedEncoder", lambda *a, **k: FakeStack())

    class FakeStack:
        dim = 8
        dictionary = type("D", (), {"pad": staticmethod(lambda: 1)})()

        def to(self, device):
            return self

        def shared_parameters(self):
            return []

    job = FinetuneJob(task="ner", src_lang="en", tgt_lang="fr", hp=Hyperparameters.of(grid[0]), epochs=1, seed=1,
                      max_seq_len=32, warmup_fraction=0.1)
    side = transfer.Side(encoder=dataclasses.make_dataclass("E", [("dictionary", object)])(None), lang="en",
                         words_to_subwords=lambda w: [[w]])
    monkeypatch.setattr(transfer, "Bottom", lambda *a, **k: None)
    monkeypatch.setattr(transfer, "new_layers", lambda *a, **k: FakeLayers())

    class FakeLayers:
        def to(self, device):
            return self

    files = examples.TaskFiles(train=tmp_path / "t", en_dev=tmp_path / "d", tgt_test=tmp_path / "x")
    out = transfer.run_transfer(job, grid, 4, side, {"fr": (dataclasses.replace(side, lang="fr"), tmp_path / "x")},
                                files, PAPER["finetune"]["top_k"],
                                {"dim": 8, "heads": 2, "ffn": 16, "layers": 1, "dropout": 0.0})
    assert out["tgt_test"]["fr"] == pytest.approx((5.0 + 15.0) / 2)  # by the target: 57.0
    assert out["en_dev"] == pytest.approx((70.0 + 60.0) / 2)
    assert [c["tgt_test"]["fr"] for c in out["cells"]] == [5.0, 15.0, 99.0]  # every cell kept in the record


def test_the_paper_configs_pretrained_model_is_chosen_by_english_dev_perplexity():
    """checkpoint_best.pt: the lowest loss on the first validation subset, English's."""
    from test_pretrain_command import opts, paper_command

    o = opts(paper_command())
    assert o["--valid-subset"].split(",")[0] == "valid_en" and o["--best-checkpoint-metric"] == "loss"
    assert PAPER["source_language"] == "en"


def test_no_paper_value_is_left_unchecked_in_the_codeswitch_and_finetune_sections():
    """A key added to the paper config's code-switching or fine-tuning grids is stated above or named
    here as one the paper is silent on (docs/reading.md says how each is read)."""
    stated = {p for p, _, _ in STATED}
    # freedict: the FreeDict downloads a run with `codeswitch.dictionary: freedict` reads; the paper's is PanLex
    silent = {("codeswitch", k) for k in ("batch_words", "seed", "max_phrase_words", "lowercase_fallback",
                                          "variants", "freedict")}
    for key in PAPER["codeswitch"]:
        assert ("codeswitch", key) in stated | silent, key
    for task in ("xnli", "ner", "parsing"):
        for key in PAPER["finetune"][task]["grid"]:
            assert ("finetune", task, "grid", key) in stated, (task, key)
