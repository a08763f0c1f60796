"""The workflow as a whole: planning the paper DAG, refusing bad configs before any job, and one
end-to-end slice of the demo (testbed -> ... -> one fine-tuning result) through Snakemake."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from xling.config import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def job_counts(output: str) -> dict[str, int]:
    table = output.split("Job stats:", 1)[1]
    counts = {}
    for line in table.splitlines()[3:]:
        m = re.match(r"^(\S+)\s+(\d+)$", line.strip())
        if not m:
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


@pytest.fixture
def licensed_config(tmp_path):
    """The paper config needs the licensed corpora at planning time: give it empty stand-ins."""
    paper = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    override = {"licensed": {}}
    for cid, entry in paper["licensed"].items():
        d = tmp_path / "licensed" / cid
        d.mkdir(parents=True)
        for f in entry["files"]:
            (d / f).write_text("")
        override["licensed"][cid] = {"path": str(d)}
    path = tmp_path / "licensed.yaml"
    path.write_text(yaml.safe_dump(override))
    return path


def test_paper_dag_plans_every_table1_job(tmp_path, licensed_config):
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    # 10 settings x 3 pairs, and Figure 7's bilingual en-de (Default) and en-en' (Sep Emb) models
    assert counts["pretrain"] == 30 + 2
    assert counts["pretrain_mono"] == 6        # en fr de ru zh + en'
    assert counts["finetune"] == 10 * 3 * (18 + 6 + 6)   # settings x pairs x grid cells
    # Sep* rows and Default anchors share one BPE/binarised data set per pair; en-de for Figure 7
    assert counts["binarize"] == 5 * 3 + 1
    assert counts["bpe"] == 5 * 3 + 1
    # en-en' reads the monolingual English data under two language ids
    assert counts["binarize_prime_pair"] == 1
    # Extra anchors: 4 independently switched copies per pair; copies 1-3 segmented and binarised
    assert counts["codeswitch"] == 3 * 4
    assert counts["bpe_variant"] == 3 * 3 * 2 and counts["binarize_variant"] == 3 * 3
    assert counts["report"] == 1
    # Section 5: fr de ru zh against en; CKA also en-en' (back-translated from the 15-way French)
    assert counts["analysis_retrieval"] == 4 and counts["analysis_cka"] == 5
    assert counts["backtranslate"] == 1 and counts["download_mt_fr_en_weights"] == 1
    assert counts["analysis_report"] == 1


def test_missing_licensed_corpus_leaves_out_only_its_cells(tmp_path):
    """Without CoNLL-2003 and the Levow set, the 8 of 9 Table 1 columns that need neither are
    planned; en-zh NER is left out, with instructions, and Table 1 still gets built."""
    proc = snakemake(tmp_path, "-n", "--cores", "1", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "NER en-zh is left out of this run" in out and "licensed.levow_zh.path is not set" in out
    counts = job_counts(proc.stdout)
    assert counts["finetune"] == 10 * 3 * (18 + 6 + 6) - 10 * 6
    assert "taskdata_ner_levow" not in counts and "taskdata_ner_conll2003" not in counts
    assert counts["report"] == 1 and counts["pretrain"] == 32
    assert not (tmp_path / "results").exists()


def test_a_pretraining_job_that_cannot_fit_its_runtime_stops_planning(tmp_path, licensed_config):
    short = tmp_path / "short.yaml"
    short.write_text("rule_resources:\n  pretrain: {cpus: 40, mem_mb: 400000, runtime: 2880, gpus: 8}\n")
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), str(short), "--", "all")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "pretrain default/en-fr: 416,800 updates x 768 streams x 256 tokens = 8.19e+10 tokens" in out
    assert "> runtime 48 h" in out and "Raise rule_resources.pretrain.runtime" in out
    assert not (tmp_path / "results").exists()


def test_bad_config_stops_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("settings:\n  default: {bpe: jiont}\nmodel: {layer: 8}\n")
    proc = snakemake(tmp_path, "--cores", "1", "--configfile", str(bad), "--", "all")
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config key 'settings.default.bpe': 'jiont' is not allowed" in out
    assert "'per_language_prefixed'" in out
    assert "unknown key(s) 'layer'" in out
    assert not (tmp_path / "results").exists()


def _slice_config(tmp_path: Path) -> Path:
    """The demo on the tiny testbed, reduced to what one (setting, pair, task) job needs."""
    cfg = {
        "run_name": "slice",
        # tiny, but with enough NER sentences for a tagger to learn the entities
        "testbed": {"scale": "tiny", "seed": 7, "wiki_sentences": 1500, "ner_train": 600, "ner_dev": 100,
                    "ner_test": 100},
        "download": {"mirror": "results/slice/testbed/mirror"},
        "licensed": {"conll2003_en": {"path": "results/slice/testbed/mirror/licensed/conll2003"},
                     "levow_zh": {"path": "results/slice/testbed/mirror/licensed/levow"}},
        "pairs": ["en-fr"],
        "monolingual": {"languages": ["en", "fr"]},
        "analysis": {"align_sentences": 100},
        "preprocess": {"valid_lines": 50, "test_lines": 50, "shards": 2},
        "pretrain": {"streams_per_epoch_per_gpu": 40 * 32, "max_epoch": 1,
                     "warmup_updates": 20},
        "finetune": {"tasks": ["ner"]},
    }
    path = tmp_path / "slice.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.slow
def test_demo_slice_end_to_end(tmp_path):
    """Testbed -> download (mirror) -> extract/tokenise/split -> BPE -> binarise -> fairseq MLM ->
    NER fine-tuning, all through Snakemake; the fine-tuned model must beat chance on English dev."""
    slice_cfg = _slice_config(tmp_path)
    demo = REPO / "config" / "demo.yaml"
    target = "results/slice/finetune/default/en-fr/ner/bs32_lr0.0005/result.json"
    retrieval = "results/slice/analysis/retrieval/en-fr.json"
    proc = snakemake(tmp_path, "--cores", "2", "--configfile", str(demo), str(slice_cfg), "--", target,
                     retrieval, timeout=900)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-4000:])
    result = json.loads((tmp_path / target).read_text())
    assert result["meta"] == {"setting": "default", "pair": "en-fr", "task": "ner", "hp_id": "bs32_lr0.0005"}
    # span F1 of a tagger that learnt nothing is ~0; the testbed's entities are learnable
    assert result["en_dev"] > 50, result
    assert 0 <= result["tgt_test"] <= 100
    done = json.loads((tmp_path / "results/slice/pretrain/default/en-fr/done.json").read_text())
    assert done["updates"] == 40
    assert set(done["valid_ppl"]) == {"en", "fr"}
    # Figure 6's job: the two monolingual models aligned on the 15-way rows, Tatoeba retrieval
    fig6 = json.loads((tmp_path / retrieval).read_text())
    assert (fig6["pair"], fig6["n_train"], fig6["n_test"]) == ("en-fr", 100, 50)
    assert fig6["layers"] == list(range(9)) and len(fig6["p_at_1"]) == 9
    # two independently trained models only retrieve after the orthogonal map (measured: best
    # layer ~40% vs <= 4% unaligned; chance is 2%)
    assert max(fig6["p_at_1"]) > max(fig6["p_at_1_unaligned"]) + 10, fig6
    # each stage left its output where docs/ARCHITECTURE.md says
    for rel in ["corpus/en/wiki.train.txt", "bpe/default/en-fr/bpe.json", "bin/default/en-fr/dict.txt",
                "bin/default/en-fr/fr/train.bin", "tasks/ner/fr/test.bio"]:
        assert (tmp_path / "results/slice" / rel).is_file(), rel
