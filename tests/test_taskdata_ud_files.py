"""UD parsing's task data from single-file downloads (``taskdata.ud_files``) and its extra test sets
(``finetune.parsing.extra_tests``): the real UD v2.3 files of ../shared/data become task files with
their sentences; a config that would train on a target, or read a split or a download nobody
listed, is refused at planning naming the key; and the demo with an overlay of the real files
plans its parsing task files from them, with no UD archive."""

from __future__ import annotations

import re

import pytest
import yaml

from support.shared_data import SHARED, needs
from support.slice import snakemake
from xling.config import REPO, load_yaml, merge, parsing, validate
from xling.errors import ConfigError, InputError
from xling.taskdata.ud import build_ud_split

UD = SHARED / "ud-2.3"

# UD v2.3's sentence counts of these files (its stats.xml; GUM's train as the study plans it)
SENTENCES = {
    ("UD_English-GUM", "train"): 2914, ("UD_English-GUM", "dev"): 707, ("UD_English-GUM", "test"): 778,
    ("UD_French-GSD", "dev"): 1476, ("UD_French-GSD", "test"): 416,
    ("UD_German-GSD", "dev"): 799, ("UD_German-GSD", "test"): 977,
    ("UD_Russian-GSD", "dev"): 579, ("UD_Russian-GSD", "test"): 601,
    ("UD_English-PUD", "test"): 1000, ("UD_French-PUD", "test"): 1000, ("UD_German-PUD", "test"): 1000,
    ("UD_Russian-PUD", "test"): 1000,
}


def ud_file(treebank: str, split: str):
    [path] = (UD / treebank).glob(f"*-ud-{split}.conllu")
    return path


def download_id(treebank: str, split: str) -> str:
    """The lead's ids: UD_French-GSD dev -> ud_fr_gsd_dev."""
    return f"ud_{ud_file(treebank, split).name.split('-ud-')[0]}_{split}"


def overlay(treebanks: dict[str, str], extra: dict[str, dict[str, str]], pairs=("en-fr", "en-ru")) -> dict:
    """A real-study overlay: every listed treebank's shared files as file:// downloads."""
    used = {*treebanks.values(), *(tb for langs in extra.values() for tb in langs.values())}
    files = {tb: {split: download_id(tb, split) for (name, split) in SENTENCES if name == tb} for tb in sorted(used)}
    downloads = {rid: {"url": ud_file(tb, split).as_uri(), "sha256": None}
                 for tb, splits in files.items() for split, rid in splits.items()}
    return {"pairs": list(pairs), "downloads": downloads, "taskdata": {"ud_files": files},
            "finetune": {"parsing": {"treebanks": treebanks, "extra_tests": extra}}}


REAL_TREEBANKS = {"en": "UD_English-GUM", "fr": "UD_French-GSD", "ru": "UD_Russian-GSD"}
PUD = {"pud": {"en": "UD_English-PUD", "fr": "UD_French-PUD", "ru": "UD_Russian-PUD"}}


def demo_with(extra: dict) -> dict:
    """config/config.yaml + config/demo.yaml + ``extra``, validated (what planning does first)."""
    cfg = merge(merge(load_yaml(REPO / "config" / "config.yaml"), load_yaml(REPO / "config" / "demo.yaml")), extra)
    validate(cfg)
    return cfg


@needs(UD)
@pytest.mark.parametrize("treebank,split", sorted(SENTENCES))
def test_a_real_ud_file_becomes_its_task_file(treebank, split, tmp_path):
    src = ud_file(treebank, split)
    out = tmp_path / "parsing" / "xx" / f"{split}.conllu"
    got = build_ud_split(out, treebank, split, conllu=src)
    assert got["sentences"] == SENTENCES[(treebank, split)]
    # an independent count: UD gives every sentence a sent_id
    assert got["sentences"] == sum(line.startswith("# sent_id") for line in src.open(encoding="utf-8"))
    assert out.read_bytes() == src.read_bytes() and not list(out.parent.glob(".*"))


@needs(UD)
def test_a_download_of_another_split_is_refused_naming_the_file(tmp_path):
    src = ud_file("UD_French-GSD", "dev")
    with pytest.raises(InputError, match=r"fr_gsd-ud-dev.conllu.*the test file of UD_French-GSD"):
        build_ud_split(tmp_path / "test.conllu", "UD_French-GSD", "test", conllu=src)
    assert not (tmp_path / "test.conllu").exists()


@needs(UD)
def test_an_extra_test_set_reads_the_archive_where_no_file_is_listed(tmp_path):
    """At paper scale PUD comes from the extracted archive (ud-treebanks-v2.3/<treebank>/)."""
    root = tmp_path / "extracted" / "ud-treebanks-v2.3" / "UD_French-PUD"
    root.mkdir(parents=True)
    (root / "fr_pud-ud-test.conllu").write_bytes(ud_file("UD_French-PUD", "test").read_bytes())
    got = build_ud_split(tmp_path / "pud.conllu", "UD_French-PUD", "test", ud_root=tmp_path / "extracted")
    assert got["sentences"] == 1000


@needs(UD)
def test_the_real_overlay_gives_each_language_its_listed_splits():
    cfg = demo_with(overlay(REAL_TREEBANKS, PUD))
    assert parsing.task_splits(cfg, "en") == ["train", "dev", "test"]
    assert parsing.task_splits(cfg, "fr") == parsing.task_splits(cfg, "ru") == ["dev", "test"]  # no train
    assert parsing.file_languages(cfg) == ["en", "fr", "ru"] and "zh" in parsing.archive_languages(cfg)
    tables = parsing.extra_tables(cfg)
    assert tables["pud"]["pairs"] == ["en-fr", "en-ru"] and tables["pud"]["score"] == "tgt_extra.pud"
    assert tables["pud_en"]["columns"] == ["en-fr", "en-ru"] and tables["pud_en"]["score"] == "src_extra.pud"
    # the default: every treebank from the archive, no extra test set, nothing new
    demo = demo_with({})
    assert parsing.file_languages(demo) == [] and parsing.extra_tables(demo) == {}
    assert all(parsing.task_splits(demo, lang) == ["train", "dev", "test"] for lang in ("en", "fr"))


def refusal(extra: dict) -> str:
    with pytest.raises(ConfigError) as err:
        demo_with(extra)
    return str(err.value)


@needs(UD)
def test_a_source_without_train_is_refused_naming_the_key():
    real = overlay(REAL_TREEBANKS, PUD)
    del real["taskdata"]["ud_files"]["UD_English-GUM"]["train"]
    msg = refusal(real)
    assert re.search(r"config key 'taskdata.ud_files.UD_English-GUM': 'en' is the source language, whose "
                     r"fine-tuning jobs read its train split", msg), msg
    assert msg.count("config key") == 1


@needs(UD)
def test_a_split_a_job_needs_missing_is_refused_naming_the_key():
    real = overlay(REAL_TREEBANKS, PUD)
    del real["taskdata"]["ud_files"]["UD_Russian-GSD"]["test"]
    msg = refusal(real)
    assert "config key 'taskdata.ud_files.UD_Russian-GSD': 'ru' is a target language" in msg
    assert "its test split" in msg and msg.count("config key") == 1


@needs(UD)
def test_a_download_id_that_does_not_exist_is_refused_naming_the_key():
    real = overlay(REAL_TREEBANKS, PUD)
    real["taskdata"]["ud_files"]["UD_French-PUD"]["test"] = "ud_fr_pud_tset"
    msg = refusal(real)
    assert "config key 'taskdata.ud_files.UD_French-PUD.test': 'ud_fr_pud_tset' is not a key of downloads" in msg
    assert msg.count("config key") == 1


@needs(UD)
def test_an_extra_test_set_named_as_a_split_is_refused():
    msg = refusal(overlay(REAL_TREEBANKS, {"test": {"fr": "UD_French-PUD"}}))
    assert "config key 'finetune.parsing.extra_tests.test': a test set may not be named as a split" in msg


@needs(UD)
def test_a_language_no_job_reads_is_left_out_of_an_extra_test_set():
    """As ``treebanks`` does, a set may list more languages than the run's pairs read (an overlay
    with fewer pairs): no task file, job input or column for them."""
    cfg = demo_with(overlay(REAL_TREEBANKS, {"pud": {**PUD["pud"], "de": "UD_German-PUD"}}))
    assert parsing.extra_tests(cfg) == PUD
    assert list(parsing.extra_tables(cfg)["pud"]["langs"]) == ["fr", "ru"]


def test_treebanks_from_the_archive_need_its_download():
    cfg = merge(load_yaml(REPO / "config" / "config.yaml"), load_yaml(REPO / "config" / "demo.yaml"))
    del cfg["downloads"]["ud"]
    with pytest.raises(ConfigError, match="config key 'downloads': UD_English-EWT, UD_French-GSD come from the UD "
                                          "archive .* which needs an entry 'ud'"):
        validate(cfg)


@needs(UD)
def test_the_demo_with_real_treebanks_plans_its_task_files_from_them(tmp_path):
    """A dry run of config/demo.yaml with the real overlay: the parsing task files come from the
    single files (a target without train), the extra test set is every parsing job's input and a
    report table; the UD archive is neither downloaded nor extracted."""
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump(overlay(REAL_TREEBANKS, PUD)), encoding="utf-8")
    proc = snakemake(tmp_path / "run", "-n", "--cores", "2", "--configfile", str(REPO / "config" / "demo.yaml"),
                     str(tmp_path / "overlay.yaml"), "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = planned_jobs(proc.stdout)
    rules = {rule for rule, _, _ in jobs}
    assert not rules & {"download_ud", "extract_ud", "taskdata_parsing"}, rules
    made = sorted(out[0].split("tasks/parsing/")[1] for rule, _, out in jobs if rule.startswith("taskdata_parsing"))
    assert made == ["en/dev.conllu", "en/pud.conllu", "en/test.conllu", "en/train.conllu", "fr/dev.conllu",
                    "fr/pud.conllu", "fr/test.conllu", "ru/dev.conllu", "ru/pud.conllu", "ru/test.conllu"]
    for rule, inputs, _ in jobs:
        if rule.startswith("taskdata_parsing"):
            assert len(inputs) == 1 and inputs[0].endswith(".conllu") and "/downloads/ud_" in inputs[0]
    grid = [(inputs, out) for rule, inputs, out in jobs if rule == "finetune_grid_parsing"]
    assert grid
    for inputs, out in grid:
        tgt = "fr" if "/en-fr/" in out[0] else "ru"
        assert {f"tasks/parsing/{tgt}/pud.conllu", "tasks/parsing/en/pud.conllu"} <= {
            i.split("results/demo/")[1] for i in inputs}
    reports = {rule: out for rule, _, out in jobs if rule.startswith("table1_extra")}
    assert sorted(reports) == ["table1_extra_pud", "table1_extra_pud_en"]
    assert reports["table1_extra_pud"] == ["results/demo/report/table1_pud.md", "results/demo/report/table1_pud.csv"]


def planned_jobs(stdout: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, inputs, outputs) of every job a dry run printed."""
    jobs = []
    for block in re.split(r"\n(?=rule \S+:\n)", stdout):
        m = re.match(r"rule (\S+):\n", block)
        if not m:
            continue
        fields = dict(re.findall(r"^    (input|output): (.*)$", block, flags=re.M))
        jobs.append((m.group(1), fields.get("input", "").split(", ") if "input" in fields else [],
                     fields.get("output", "").split(", ")))
    return jobs


@needs(UD)
def test_the_task_data_jobs_of_the_real_overlay_run(tmp_path):
    """Snakemake runs the download and task-data jobs of the single files (file:// downloads copy
    them; the demo's offline mirror is set aside): the task files are the UD files."""
    real = overlay(REAL_TREEBANKS, PUD)
    real["download"] = {"mirror": None}
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump(real), encoding="utf-8")
    targets = [f"results/demo/tasks/parsing/{f}" for f in ("en/train.conllu", "fr/test.conllu", "fr/pud.conllu")]
    proc = snakemake(tmp_path / "run", "--cores", "2", "--configfile", str(REPO / "config" / "demo.yaml"),
                     str(tmp_path / "overlay.yaml"), "--", *targets)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for target, (treebank, split) in zip(targets, [("UD_English-GUM", "train"), ("UD_French-GSD", "test"),
                                                   ("UD_French-PUD", "test")]):
        assert (tmp_path / "run" / target).read_bytes() == ud_file(treebank, split).read_bytes()
    assert not (tmp_path / "run" / "results" / "demo" / "downloads" / "ud").exists()
