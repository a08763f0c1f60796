"""Extra test sets of a fine-tuning job (finetune.parsing.extra_tests): scored after training as
the target's test set is, by the same best-epoch weights of every cell, in the same pass; the
training and today's record keys stay as they are; result.json records them under tgt_extra /
src_extra, which the report reads; the workflow script passes them on."""

from __future__ import annotations

import copy
import json
import runpy
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_finetune_grid import EAGER, HP, tiny_encoder

from support.toy_tasks import LANGS, files, job, per_word, write_task_dir
from xling.finetune import GridSettings, TaskFiles, finetune_grid, run_grid
from xling.report.collect import read_result

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    return write_task_dir(tmp_path_factory.mktemp("extra_tasks"), seed=2, sizes={"train": 64, "dev": 30, "test": 30})


def with_extras(task_dir: Path, copies: Path) -> TaskFiles:
    """The parsing job's files, with copies of the target's test and dev sets and of English dev as
    extra test sets (other paths, the same sentences)."""
    base = files(task_dir, "parsing")
    copies.mkdir(parents=True, exist_ok=True)
    named = {}
    for name, src in (("same_test", base.tgt_test), ("same_dev", base.tgt_dev), ("same_en_dev", base.en_dev)):
        named[name] = copies / f"{name}.conllu"
        shutil.copyfile(src, named[name])
    return TaskFiles(train=base.train, en_dev=base.en_dev, tgt_dev=base.tgt_dev, tgt_test=base.tgt_test,
                     tgt_extra={"pud": named["same_test"], "dev2": named["same_dev"]},
                     src_extra={"pud": named["same_en_dev"]})


def test_an_extra_set_equal_to_a_scored_set_gets_its_score(task_dir, tmp_path, no_dropout):
    """Three cells of a grid on a tiny model: an extra test set with the target's test sentences
    has exactly tgt_test's LAS (and the one with its dev sentences tgt_dev's, the source's with
    English dev's en_dev), cell by cell; training, selection and every other key are those of the
    job without extra sets."""
    jobs = [job("parsing", hp, 2, seed=3) for hp in HP["parsing"]]
    base = tiny_encoder(separate_embeddings=True, separate_layers=1)  # the language's own parts matter
    plain = finetune_grid(jobs, copy.deepcopy(base), per_word, files(task_dir, "parsing"), settings=EAGER)
    extra = finetune_grid(jobs, copy.deepcopy(base), per_word, with_extras(task_dir, tmp_path), settings=EAGER)
    for p, e in zip(plain, extra, strict=True):
        assert e["tgt_extra"] == {"pud": e["tgt_test"], "dev2": e["tgt_dev"]}
        assert e["src_extra"] == {"pud": e["en_dev"]}
        assert e["scores"]["tgt_extra.pud"] == e["scores"]["tgt_test"]
        # nothing is chosen on them: the same training, the same best epoch, the same scores
        assert e["history"] == p["history"] and e["best_epoch"] == p["best_epoch"]
        assert {k: e["scores"][k] for k in p["scores"]} == p["scores"]
        assert set(p) == set(e) - {"tgt_extra", "src_extra"} and "tgt_extra" not in p  # today's record as it was
        assert e["examples"]["tgt_extra.pud"] == e["examples"]["tgt_test"]
    assert len({e["tgt_extra"]["pud"] for e in extra}) > 1  # the cells differ: each is scored with its own weights
    assert any(e["tgt_test"] != e["tgt_dev"] for e in extra)  # the two sets can be told apart


def test_a_cell_trained_as_a_module_scores_its_extra_sets_too(task_dir, tmp_path, no_dropout):
    j = job("parsing", HP["parsing"][1], 2, seed=3)
    [e] = finetune_grid([j], tiny_encoder(), per_word, with_extras(task_dir, tmp_path), as_module=True)
    assert e["tgt_extra"] == {"pud": e["tgt_test"], "dev2": e["tgt_dev"]} and e["src_extra"] == {"pud": e["en_dev"]}


def test_an_extra_set_is_capped_as_the_test_set_is(task_dir, tmp_path, no_dropout):
    j = job("parsing", HP["parsing"][1], 1, seed=3, max_eval_examples=7)
    [e] = finetune_grid([j], tiny_encoder(), per_word, with_extras(task_dir, tmp_path), settings=EAGER)
    assert e["examples"]["tgt_extra.pud"] == e["examples"]["tgt_test"] == 7
    assert e["tgt_extra"]["pud"] == e["tgt_test"]


@pytest.fixture(scope="module")
def job_inputs(task_dir, tmp_path_factory):
    from support.tiny_checkpoint import write_tiny_checkpoint

    sentences = {lang: [" ".join(f"w{i}" for i in range(k, k + 6)) for k in range(6)] + ["v0 v1 n0 n1 n2 n3"]
                 for lang in LANGS}
    return write_tiny_checkpoint(tmp_path_factory.mktemp("extra_job"), sentences)


def test_the_grid_job_writes_them_and_the_report_reads_them(task_dir, job_inputs, tmp_path):
    ckpt, bpe, dictionary = job_inputs
    jobs = [job("parsing", hp, 1, seed=1) for hp in HP["parsing"][:2]]
    paths = [tmp_path / "finetune" / "default" / "en-fr" / "seed1" / "parsing" / f"bs8_lr{hp['lr']:g}" / "seed1" /
             "result.json" for hp in HP["parsing"][:2]]
    run_grid(jobs, ckpt, dictionary, bpe, with_extras(task_dir, tmp_path / "copies"), paths,
             settings=GridSettings.from_params(dict(compile=False)))
    for p in paths:
        saved = json.loads(p.read_text())
        assert saved["tgt_extra"]["pud"] == saved["tgt_test"]
        assert read_result(p, "tgt_extra.pud").score == saved["tgt_test"]
        assert read_result(p, "src_extra.pud").score == saved["en_dev"]
        assert read_result(p).score == saved["tgt_test"]


def test_the_workflow_script_passes_the_extra_inputs_on(task_dir, job_inputs, tmp_path):
    """workflow/scripts/finetune_grid.py with the inputs the rule names (tgt_extra_<name>,
    src_extra_<name>) and the objects Snakemake injects."""
    from snakemake.iocontainers import Namedlist

    ckpt, bpe, dictionary = job_inputs
    fl = with_extras(task_dir, tmp_path / "copies")
    tokenize = {lang: {"moses_lang": lang, "segmenter": "none", "lowercase": False, "stanford_model": None}
                for lang in LANGS}
    jobs = [{"task": "parsing", "src_lang": "en", "tgt_lang": "fr", "hp": HP["parsing"][0], "epochs": 1, "seed": 1,
             "max_seq_len": 64, "schedule": "warmup_linear", "warmup_fraction": 0.1, "epoch_size": None,
             "max_train_examples": None, "tokenize": tokenize}]
    out = tmp_path / "r" / "result.json"
    inputs = {"train": fl.train, "en_dev": fl.en_dev, "tgt_dev": fl.tgt_dev, "tgt_test": fl.tgt_test,
              **{f"tgt_extra_{k}": v for k, v in fl.tgt_extra.items()},
              **{f"src_extra_{k}": v for k, v in fl.src_extra.items()},
              "checkpoint": ckpt, "bpe": bpe, "dictionary": dictionary}
    sm = SimpleNamespace(
        input=Namedlist(fromdict={k: str(v) for k, v in inputs.items()}), output=Namedlist([str(out)]),
        params=Namedlist(fromdict={"jobs": jobs, "metas": [{"hp_id": "a"}], "grid": {"compile": False}}),
        threads=1, resources=Namedlist(fromdict={"gpu": 0}), log=[str(tmp_path / "log" / "grid.log")],
        rule="finetune_grid_parsing", wildcards=Namedlist(fromdict={"task": "parsing", "bs": "8"}),
    )
    runpy.run_path(str(REPO / "workflow" / "scripts" / "finetune_grid.py"), init_globals={"snakemake": sm},
                   run_name="__snakemake__")
    rec = json.loads(out.read_text())
    assert rec["tgt_extra"] == {"pud": rec["tgt_test"], "dev2": rec["tgt_dev"]}
    assert rec["src_extra"] == {"pud": rec["en_dev"]}
    summary = json.loads((tmp_path / "log" / "grid.log").read_text().strip().splitlines()[-1])
    assert summary["cells"][0]["tgt_extra"] == rec["tgt_extra"]
