"""The workflow as a whole: planning the paper DAG, refusing bad configs before any job, and one
end-to-end slice of the demo (testbed -> ... -> one fine-tuning result) through Snakemake."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from support.slice import FIGURE_TARGETS, SLICE_TARGETS, job_counts, snakemake
from xling.config import REPO
from xling.report import rebuild
from xling.report.bundle import check_bundle


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
    # settings x pairs x one job per batch size of each grid (XNLI 2 x 9 cells, NER and parsing 2 x 3)
    assert counts["finetune_grid_xnli"] == counts["finetune_grid_ner"] == counts["finetune_grid_parsing"] == 10 * 3 * 2
    assert "finetune" not in counts
    # Sep* rows and Default anchors share one BPE/binarised data set per pair; en-de for Figure 7
    assert counts["binarize"] == 5 * 3 + 1
    assert counts["bpe"] == 5 * 3 + 1
    # en-en' reads the monolingual English data under two language ids
    assert counts["binarize_prime_pair"] == 1
    # Extra anchors: 4 independently switched copies per pair; copies 1-3 segmented and binarised
    assert counts["codeswitch"] == 3 * 4
    assert counts["bpe_variant"] == 3 * 3 * 2 and counts["binarize_variant"] == 3 * 3
    assert counts["table1"] == 1
    # Section 5: fr de ru zh against en; CKA also en-en' (back-translated from the 15-way French)
    assert counts["analysis_retrieval"] == 4 and counts["analysis_cka"] == 5
    # Figure 4: the vectors of en fr de ru zh, one alignment job per en-x
    assert counts["word_vectors"] == 5 and counts["analysis_words"] == 4
    assert counts["download_fasttext_en"] == 1 and counts["download_muse_en_zh_test"] == 1
    # Figure 5: fast_align built once, links and two maps per Table 1 pair, one job per (task, pair,
    # layer 0-8)
    assert counts["build_fast_align"] == 1 and counts["word_links"] == 3 and counts["contextual_maps"] == 6
    assert counts["transfer"] == 2 * 3 * 9
    assert counts["backtranslate"] == 1 and counts["download_mt_fr_en_weights"] == 1
    assert counts["analysis_report"] == 1
    # transformers exports: the 5 rows whose parts are all shared x 3 pairs, en-de, 6 monolingual
    assert counts["export_hf"] == 5 * 3 + 1 + 6
    assert counts["compute_ledger"] == 1 and counts["findings"] == 1
    # the shared-space curve: Default, No anchors and Sep Emb + L1-6 of each pair, one figure
    assert counts["shared_space"] == 3 * 3 and counts["shared_space_report"] == 1


def test_seeds_replicate_table1_and_nothing_else(tmp_path, licensed_config):
    """seeds: 3 pretraining x 2 fine-tuning seeds: every Table 1 model three times, every grid cell
    six times; Section 5's models, exports and figures once; one findings table."""
    seeds = tmp_path / "seeds.yaml"
    seeds.write_text(yaml.safe_dump({"seeds": {"pretrain": [1, 3, 4], "finetune": [1, 2]}}))
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), str(seeds), "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    assert counts["pretrain"] == 30 * 3 + 2 and counts["pretrain_mono"] == 6
    assert counts["finetune_grid_xnli"] == counts["finetune_grid_ner"] == 10 * 3 * 2 * 3 * 2
    assert counts["transfer"] == 2 * 3 * 9 and counts["export_hf"] == 5 * 3 + 1 + 6
    assert counts["findings"] == 1 and counts["table1"] == 1
    assert counts["shared_space"] == 3 * 3 * 3 and counts["shared_space_report"] == 1
    assert "results/paper/finetune/sep_l1_3/en-ru/seed4/ner/bs32_lr5e-05/seed2/result.json" in proc.stdout


def test_missing_licensed_corpus_leaves_out_only_its_cells(tmp_path):
    """Without CoNLL-2003 and the Levow set, the 8 of 9 Table 1 columns that need neither are
    planned; en-zh NER is left out, with instructions, and Table 1 still gets built."""
    proc = snakemake(tmp_path, "-n", "--cores", "1", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "NER en-zh is left out of this run" in out and "licensed.levow_zh.path is not set" in out
    assert job_counts(proc.stdout)["transfer"] == (2 + 3) * 9  # Figure 5 leaves out NER en-zh as well
    counts = job_counts(proc.stdout)
    assert counts["finetune_grid_xnli"] == counts["finetune_grid_parsing"] == 10 * 3 * 2
    assert counts["finetune_grid_ner"] == 10 * 2 * 2  # not en-zh
    assert "taskdata_ner_levow" not in counts and "taskdata_ner_conll2003" not in counts
    assert counts["table1"] == 1 and counts["pretrain"] == 32
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


@pytest.mark.slow
def test_demo_slice_end_to_end(slice_run):
    """The fine-tuned model must beat chance on English dev, and the two monolingual models align."""
    tmp_path, _ = slice_run
    target, retrieval, _ = SLICE_TARGETS
    result = json.loads((tmp_path / target).read_text())
    assert result["meta"] == {"setting": "default", "pair": "en-fr", "task": "ner", "hp_id": "bs32_lr0.0005",
                              "pretrain_seed": 1, "finetune_seed": 1}
    # span F1 of a tagger that learnt nothing is ~0; the testbed's entities are learnable (measured:
    # 45 after 3 epochs on XLM's model of 40 updates, still rising; 56 on the earlier BERT-headed model)
    assert result["en_dev"] > 30, result
    assert 0 <= result["tgt_test"] <= 100
    done = json.loads((tmp_path / "results/slice/pretrain/default/en-fr/seed1/done.json").read_text())
    assert done["updates"] == 40
    assert set(done["valid_ppl"]) == {"en", "fr"}
    # Figure 6's job: the two monolingual models aligned on the 15-way rows, Tatoeba retrieval
    fig6 = json.loads((tmp_path / retrieval).read_text())
    assert (fig6["pair"], fig6["n_train"], fig6["n_test"]) == ("en-fr", 100, 50)
    assert fig6["layers"] == list(range(9)) and len(fig6["p_at_1"]) == 9
    # two independently trained models only retrieve after the orthogonal map (measured: best
    # layer ~40% vs <= 4% unaligned; chance is 2%)
    assert max(fig6["p_at_1"]) > max(fig6["p_at_1_unaligned"]) + 10, fig6
    # the export of the trained bilingual model gives its hidden states for the corpus's own text
    _export_matches_the_model(tmp_path / "results/slice")
    # Figure 4: both models' whole-word embeddings and every layer's contextual vectors, and
    # fastText (trained by the testbed) on the same words, aligned on the testbed's MUSE pairs
    words, transfer = (json.loads((tmp_path / t).read_text()) for t in FIGURE_TARGETS)
    emb = words["embedding"]
    assert emb["mlm"]["forward"]["vocab"] == emb["fasttext"]["forward"]["vocab"]
    assert min(emb["mlm"]["forward"]["vocab"]) > 50 and emb["mlm"]["forward"]["test_sources"] > 5
    assert len(words["contextual"]["mlm"]) == 9
    # scored both ways (at this size both are near chance: see docs/demo.md)
    assert all(0 <= emb[m][d]["p_at_1"] <= 100 for m in ("mlm", "fasttext") for d in ("forward", "reverse"))
    # Figure 5: the three models of layer 2, trained on English, tested on French
    assert set(transfer["tgt_test"]) == {"mlm_align", "bimlm", "bimlm_w"} and transfer["layer"] == 2
    # the models on normalised (and mapped) states learn English (~0 for a tagger that learnt
    # nothing; measured 23-38 on XLM's model); biMLM reads the raw states of a 40-update model, on
    # which the new layers may learn little, so it is only checked to be scored
    assert transfer["en_dev"]["mlm_align"] > 15 and transfer["en_dev"]["bimlm_w"] > 15, transfer["en_dev"]
    assert 0 <= transfer["en_dev"]["bimlm"] <= 100
    # each stage left its output where docs/ARCHITECTURE.md says
    for rel in ["corpus/en/wiki.train.txt", "bpe/default/en-fr/bpe.json", "bin/default/en-fr/dict.txt",
                "bin/default/en-fr/fr/train.bin", "tasks/ner/fr/test.bio"]:
        assert (tmp_path / "results/slice" / rel).is_file(), rel


def _export_matches_the_model(run: Path) -> None:
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from xling.export import Pretokenizer, language_inputs
    from xling.model.checkpoint import load_encoder

    export = run / "hf/default/en-fr"
    ours = load_encoder(run / "pretrain/default/en-fr/seed1/checkpoint_best.pt", run / "bin/default/en-fr/dict.txt")
    model, tokenizer = AutoModelForMaskedLM.from_pretrained(export).eval(), AutoTokenizer.from_pretrained(export)
    info = json.loads((export / "xling_export.json").read_text(encoding="utf-8"))
    assert info["format"] == "XLMWithLMHeadModel" and info["language_input"] == "langs"  # the demo's model is XLM's
    for lang in ("en", "fr"):
        lines = (run / f"corpus/{lang}/wiki.test.txt").read_text(encoding="utf-8").splitlines()[:8]
        batch = tokenizer(Pretokenizer(export, lang)(lines), padding=True, truncation=True, return_tensors="pt")
        batch.update(language_inputs(info, lang, batch["input_ids"]))
        mask = batch["attention_mask"].bool()
        with torch.no_grad():
            theirs = model(**batch, output_hidden_states=True).hidden_states
            states = ours.encode(batch["input_ids"], lang, padding_mask=~mask)
        assert len(theirs) == len(states) == ours.num_layers + 1
        for a, b in zip(theirs, states):
            torch.testing.assert_close(a[mask], b[mask], rtol=1e-4, atol=1e-4)


def scheduled(output: str) -> list[tuple[str, str]]:
    """(rule, reason) of every job a dry run lists."""
    jobs, rule = [], None
    for line in output.splitlines():
        m = re.match(r"^(?:local)?rule (\S+):$", line)
        if m:
            rule = m.group(1)
        elif line.strip().startswith("reason:") and rule is not None:
            jobs.append((rule, line.strip()[len("reason:"):].strip()))
            rule = None
    return jobs


@pytest.mark.slow
def test_a_changed_setting_reruns_exactly_the_jobs_that_use_it(slice_run, tmp_path):
    """Every value a job uses is a tracked param: after a run, changing a preprocessing knob reruns
    tokenisation and what reads raw text the same way (fine-tuning, analysis) -- and what depends
    on them -- while a fine-tuning knob reruns fine-tuning alone."""
    workdir, configs = slice_run

    def dry_run(overlay: str | None) -> list[tuple[str, str]]:
        extra = []
        if overlay is not None:
            (tmp_path / "overlay.yaml").write_text(overlay)
            extra = [str(tmp_path / "overlay.yaml")]
        proc = snakemake(workdir, "-n", "--cores", "2", "--configfile", *configs, *extra, "--", *SLICE_TARGETS)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return scheduled(proc.stdout)

    assert dry_run(None) == []  # nothing changed: nothing to do
    PARAMS = "Params have changed since last execution"

    jobs = dry_run("preprocess: {lowercase_and_remove_accent: true}\n")
    rules = {rule for rule, _ in jobs}
    # tokenisation's own params changed (4 jobs: en and fr, two shards each); fine-tuning, the
    # analysis and the export, which tokenise raw text the same way (or record how), rerun with
    # everything built on the corpus
    assert [rule for rule, why in jobs if PARAMS in why] == ["tokenize_shard"] * 4, jobs
    assert {"finetune_grid_ner", "analysis_retrieval", "export_hf"} <= rules, jobs
    # nothing outside that chain (the raw shards are temporary files, so they are made again)
    chain = {"wiki_extract", "split_shards_en", "split_shards_fr", "tokenize_shard", "merge_split", "bpe", "binarize",
             "pretrain", "bpe_mono", "binarize_mono", "pretrain_mono", "finetune_grid_xnli", "finetune_grid_ner",
             "finetune_grid_parsing", "analysis_retrieval", "export_hf"}
    assert rules <= chain, jobs

    for overlay, rule in (("finetune: {ner: {epochs: 4}}\n", "finetune_grid_ner"),
                          ("analysis: {max_seq_len: 64}\n", "analysis_retrieval")):
        jobs = dry_run(overlay)
        assert len(jobs) == 1 and jobs[0][0] == rule and PARAMS in jobs[0][1], (overlay, jobs)


@pytest.mark.slow
def test_the_aligner_is_a_tracked_param(slice_run, tmp_path):
    """Switching Figure 5's aligner to eflomal reruns the links and what is built on them."""
    workdir, configs = slice_run
    (tmp_path / "aligner.yaml").write_text("analysis: {transfer: {aligner: eflomal}}\n")
    proc = snakemake(workdir, "-n", "--cores", "2", "--configfile", *configs, str(tmp_path / "aligner.yaml"),
                     "--", FIGURE_TARGETS[1])
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = scheduled(proc.stdout)
    assert [rule for rule, why in jobs if "Params have changed" in why] == ["word_links"], jobs
    assert {rule for rule, _ in jobs} == {"word_links", "contextual_maps", "transfer"}, jobs


@pytest.mark.slow
def test_snakemake_report_shows_the_marked_results_in_a_browser(slice_report_run, tmp_path):
    """`snakemake --report` after a run: a self-contained zip and page holding the marked results
    (here the anchor table, which the report stage built) with their categories and captions; opened in
    headless Chromium, the page lists the table under its category."""
    import zipfile

    from support.browser import chromium
    from xling.report.browser import check_report, rendered_dom, visible_text

    workdir, configs = slice_report_run
    target = "results/slice/report/anchors.md"
    proc = snakemake(workdir, "--cores", "2", "--configfile", *configs, "--", target)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("report.zip", "report.html"):
        proc = snakemake(workdir, "--cores", "1", "--configfile", *configs, "--report", str(tmp_path / name), "--",
                         target)
        assert proc.returncode == 0, proc.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / "report.zip") as z:
        names = z.namelist()
        assert any(n.endswith("anchors.md") for n in names), names
        page = z.read(next(n for n in names if n.endswith("report.html"))).decode()
    assert "2. Anchor points" in page and "No anchors has none by construction" in page  # category, caption
    browser = chromium()
    if browser is None:
        pytest.skip("no Chromium, and not root to install Debian's package")
    html = tmp_path / "report.html"
    assert "Reproduction of Wu, Conneau et al." in visible_text(rendered_dom(html, browser))  # the landing page
    assert check_report(html, {"2. Anchor points": ["anchors.md"]}, browser) == {}
    # and the check can fail: a category the report does not have is reported missing
    assert check_report(html, {"1. Table 1: zero-shot transfer": ["table1.csv"]}, browser) != {}


def test_each_stage_declares_its_rules_once_and_liu2020_reuses_them():
    """One stage, one rule file: every workflow script is run by rules of one rule file only, so
    no second file re-declares a stage (Liu et al. reuses BPE, binarisation and pretraining with
    `use rule`); common.smk holds no rule and stays short."""
    rules_dir = REPO / "workflow" / "rules"
    declared: dict[str, set[str]] = {}
    for smk in rules_dir.glob("*.smk"):
        for block in re.split(r"\n(?=\s*(?:rule|use rule)\b)", smk.read_text()):
            m = re.search(r'script:\s*"\.\./scripts/([\w.]+)"', block)
            if m:
                declared.setdefault(m.group(1), set()).add(smk.name)
    assert declared["bpe_build.py"] == {"bpe.smk"} and declared["pretrain.py"] == {"pretrain.smk"}
    assert declared["binarize.py"] == {"binarize.smk"}
    assert {s: f for s, f in declared.items() if len(f) > 1} == {}
    liu = (rules_dir / "liu2020.smk").read_text()
    for stage_rule in ("bpe_mono", "binarize_mono", "pretrain_mono"):
        assert f"use rule {stage_rule} as liu_" in liu
    common = (rules_dir / "common.smk").read_text()
    assert not re.search(r"^\s*rule\b", common, re.M) and len(common.splitlines()) <= 250


def test_demo_full_plans_every_table1_row_three_times_on_en_fr(tmp_path):
    """`make demo-full`: the 10 rows x 3 pretraining seeds on en-fr, the central finding's rows more
    (seeds.rows: No anchors 15, Default, Sep L1-6 and Sep Emb + L1-6 5 each), Figure 7's other
    bilingual models and Section 5's monolingual models once each, every model fine-tuned on all
    three tasks."""
    configs = [str(REPO / "config" / "demo.yaml"), str(REPO / "config" / "demo_full.yaml")]
    proc = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", *configs, "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    table1 = 6 * 3 + 15 + 3 * 5
    assert counts["pretrain"] == table1 + 3          # + Default en-ru, en-zh and en-en′ (Figure 7)
    assert counts["pretrain_mono"] == 4 + 1          # en fr ru zh + en′
    # one grid job per task and model, of one cell (the demo's grids have one per batch size)
    assert counts["finetune_grid_xnli"] == counts["finetune_grid_ner"] == counts["finetune_grid_parsing"] == table1
    assert "finetune" not in counts
    # the shared-space curve of every seed of Default (5), No anchors (15) and Sep Emb + L1-6 (5)
    assert counts["shared_space"] == 5 + 15 + 5 and counts["findings"] == 1 and counts["table1"] == 1
    assert counts["transfer"] == 2 * 3 and counts["analysis_cka"] == 4


def test_paper_dag_plans_liu2020(tmp_path, licensed_config):
    """Target liu2020: 15 languages sampled at 2 sizes, one joint BPE and binarisation per size, an
    MLM per size and window, word2vec and GloVe per size, retrieval of 12 languages (MUSE has no
    en-sw or en-ur dictionary) for each of the 4 models per size, token translation of each MLM;
    nothing of Table 1."""
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), "--", "liu2020")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    assert counts["liu_sample"] == 15 * 2 and counts["liu_bpe"] == 2 and counts["liu_binarize"] == 2
    assert counts["liu_pretrain"] == 2 * 2 and counts["liu_static"] == 2 * 2
    assert counts["liu_retrieval"] == 4 * 2 and counts["liu_report"] == 1
    # token translation (Table 2's 12 directions, every layer and alpha) of each MLM, one report
    assert counts["liu_translation"] == 2 * 2 and counts["liu_translation_report"] == 1
    # and on m-BERT itself, from its four downloaded files
    assert counts["liu_translation_mbert"] == 1 and counts["download_mbert_weights"] == 1
    assert counts["liu_xnli_mbert"] == 1  # Table 4 on m-BERT itself
    assert counts["liu_retrieval_mbert"] == 1  # its word retrieval, "Google BERT" of Figures 1 and 3
    # XNLI of each MLM on all 15 languages (12 of them beyond Table 1's), one report
    assert counts["liu_xnli"] == 2 * 2 and counts["liu_xnli_report"] == 1 and counts["liu_taskdata_xnli"] == 1
    assert counts["liu_xnli_static"] == 2 * 2  # word2vec and GloVe at each size, with their own classifier
    assert counts["download_wiki_th"] == 1 and counts["download_muse_en_hi_test"] == 1
    assert "download_muse_en_sw_test" not in counts and "pretrain" not in counts and "finetune" not in counts
    # 20-token windows: one sentence per sample, cut, in the same pretraining section otherwise
    assert "results/paper/liu/pretrain/n1000000/w20/done.json" in proc.stdout


def test_demo_liu_plans_every_experiment_and_no_mbert(tmp_path):
    """`make demo-liu`: the testbed's 2 sizes x 2 windows, word2vec and GloVe, retrieval, token
    translation and XNLI of each; nothing that needs m-BERT (a hub download the testbed's mirror
    does not hold)."""
    proc = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", str(REPO / "config" / "demo.yaml"),
                     "--", "liu2020")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    assert counts["liu_pretrain"] == 2 * 2 and counts["liu_static"] == 2 * 2
    assert counts["liu_translation"] == 2 * 2 and counts["liu_xnli"] == 2 * 2
    assert counts["liu_xnli_static"] == 2 * 2 and counts["liu_xnli_report"] == 1
    assert not [rule for rule in counts if "mbert" in rule]


def test_liu2020_is_off_without_languages(tmp_path, licensed_config):
    off = tmp_path / "off.yaml"
    off.write_text(yaml.safe_dump({"liu2020": {"languages": []}}))
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), str(off), "--", "liu2020")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "liu_" not in proc.stdout


def test_the_workflow_lint_sets_aside_only_the_layout_lint(tmp_path):
    """`make lint` runs Snakemake's linter and fails on every lint but the one this layout
    disagrees with (a stage's functions beside its rules): shown on a workflow that has both."""
    sys.path.insert(0, str(REPO / "scripts"))
    from lint_workflow import SET_ASIDE, lints

    (tmp_path / "rules.smk").write_text('def out(w):\n    return "b"\n\n\nrule a:\n    output:\n        "/abs/a"\n'
                                        '    shell:\n        "touch {output}"\n')
    (tmp_path / "Snakefile").write_text('include: "rules.smk"\n\n\nrule all:\n    input:\n        "/abs/a"\n')
    titles = {title for _, title in lints([], tmp_path / "Snakefile")}
    assert SET_ASIDE <= titles and any(t.startswith("Absolute path") for t in titles)
    assert {title for _, title in lints([REPO / "config" / "demo.yaml"])} <= SET_ASIDE


def test_ablation_targets_plan_exactly_their_part_of_the_paper_run(tmp_path, licensed_config):
    """One Table 1 row, one pair's columns, one Section 5 figure: each named target plans its own
    pretrainings and every grid cell and seed of its fine-tunings, and nothing else of Table 1."""
    from xling import config as xcfg
    from xling.finetune.job import cells_by_batch_size

    cfg = xcfg.load(REPO / "config" / "config.yaml", licensed_config)
    # fine-tuning jobs of one model: a job per batch size of each task's grid, its cells trained together
    cells = sum(len(cells_by_batch_size(cfg["finetune"][t])) for t in cfg["finetune"]["tasks"])
    seeds = len(cfg["seeds"]["pretrain"]) * len(cfg["seeds"]["finetune"])

    def finetune(counts):
        return sum(n for rule, n in counts.items() if rule.startswith("finetune"))

    def counts(target):
        proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(licensed_config), "--", target)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return job_counts(proc.stdout)

    row = counts("table1_row_sep_emb")
    assert row["pretrain"] == len(cfg["pairs"]) * len(cfg["seeds"]["pretrain"])
    assert finetune(row) == len(cfg["pairs"]) * cells * seeds and row["table1_row"] == 1
    assert "table1" not in row and "pretrain_mono" not in row
    pair = counts("table1_pair_en_ru")
    assert pair["pretrain"] == len(cfg["settings"]) * len(cfg["seeds"]["pretrain"])
    assert finetune(pair) == len(cfg["settings"]) * cells * seeds and pair["table1_column"] == 1
    # Figure 6: the monolingual models and one retrieval job per language, no bilingual model
    fig6 = counts("wu2020_figure6")
    targets = [lang for lang in cfg["monolingual"]["languages"] if lang != cfg["source_language"]]
    assert fig6["pretrain_mono"] == len(cfg["monolingual"]["languages"])
    assert fig6["analysis_retrieval"] == len(targets) and "pretrain" not in fig6 and finetune(fig6) == 0


REPORT_STAGE = {"unpack_bundle", "table1", "findings", "anchors_table", "compute_ledger", "analysis_report",
                "shared_space_report", "report"}


@pytest.mark.slow
def test_a_bundle_rebuilds_every_table_and_figure_without_any_upstream_job(slice_report_run, tmp_path, capsys):
    """The slice's finished run as a bundle; unpacked in a fresh working directory with nothing
    else, `report` plans the report jobs only and writes every table and figure CSV the bundle
    carries byte for byte (xling.report.rebuild). A tampered bundle stops planning with the file
    named, and nothing is written."""
    import shutil
    import tarfile

    workdir, _ = slice_report_run  # the slice after `bundle report` (support.slice.run_report)
    run = workdir / "results/slice"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name in ("bundle.tar.gz", "bundle.config.yaml"):
        shutil.copy(run / name, fresh / name)
    def args(d):  # --configfile is read from the caller's directory, not --directory's
        return ["--cores", "2", "--configfile", str(d / "bundle.config.yaml"),
                "--config", f"bundle={d / 'bundle.tar.gz'}", "--", "report"]

    proc = snakemake(fresh, "-n", *args(fresh))
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    assert set(counts) - {"total"} <= REPORT_STAGE and counts["unpack_bundle"] == 1, counts
    # the whole report, rebuilt as `make check-bundle` does it: every table and figure CSV the run
    # wrote (carried in the bundle) written again byte for byte
    rebuilt = tmp_path / "rebuilt"
    assert rebuild.main([str(fresh / "bundle.tar.gz"), "--cores", "2", "--workdir", str(rebuilt)]) == 0, \
        capsys.readouterr()
    verdict = capsys.readouterr().out.splitlines()[-1]
    carried = check_bundle(fresh / "bundle.tar.gz", yaml.safe_load((fresh / "bundle.config.yaml").read_text())).report
    for name in ("table1.md", "table1.tex", "findings.md", "compute.md", "figure5.csv", "shared_space.csv"):
        assert f"results/slice/report/{name}" in carried, name
    assert verdict.startswith("PASS") and f"{len(carried)} of {len(carried)} report files" in verdict, verdict
    # no model, corpus or checkpoint came with it: the archive holds result files only
    assert not (rebuilt / "results/slice/pretrain/default/en-fr/seed1/checkpoint_best.pt").exists()
    with tarfile.open(fresh / "bundle.tar.gz") as tar:
        assert not [m.name for m in tar.getmembers() if m.name.endswith((".pt", ".bin", ".bpe"))]

    # one result altered after the fact: refused before any job, naming that file; nothing written
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    shutil.copy(fresh / "bundle.config.yaml", tampered / "bundle.config.yaml")
    victim = None
    with tarfile.open(fresh / "bundle.tar.gz") as src, tarfile.open(tampered / "bundle.tar.gz", "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read()
            if victim is None and m.name.endswith("/result.json"):
                victim, data = m.name, data.replace(b'"tgt_test": ', b'"tgt_test": 1', 1)
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
    proc = snakemake(tampered, *args(tampered))
    assert proc.returncode != 0 and f"bundle.tar.gz:{victim}" in proc.stdout + proc.stderr
    assert not (tampered / "results").exists()


@pytest.mark.slow
def test_a_grid_of_several_learning_rates_trains_as_one_job(slice_copy, tmp_path):
    """With two NER learning rates at one batch size, one finetune_grid_ner job writes both cells'
    result.json where the cell jobs would, each its own hp and meta; the ledger counts it once.
    (That grid jobs equal separate jobs is tests/test_finetune_grid.py's, with dropout off.)"""
    workdir, configs = slice_copy
    (tmp_path / "grid.yaml").write_text("finetune: {ner: {grid: {batch_size: [32], lr: [5.0e-4, 1.0e-4]}}}\n")
    cells = [f"results/slice/finetune/default/en-fr/seed1/ner/bs32_lr{lr}/seed1/result.json"
             for lr in ("0.0005", "0.0001")]
    args = ["--cores", "2", "--configfile", *configs, str(tmp_path / "grid.yaml"), "--", *cells]
    proc = snakemake(workdir, "-n", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert job_counts(proc.stdout) == {"finetune_grid_ner": 1, "total": 1}
    proc = snakemake(workdir, *args, timeout=900)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-4000:])
    results = [json.loads((workdir / c).read_text()) for c in cells]
    assert [r["meta"]["hp_id"] for r in results] == ["bs32_lr0.0005", "bs32_lr0.0001"]
    assert [r["hp"]["lr"] for r in results] == [5.0e-4, 1.0e-4]
    # each cell trained with its own rate: the slice's rate learns English as its cell job does;
    # a fifth of it, in 3 epochs, less
    assert results[0]["en_dev"] > 30 and results[0]["en_dev"] != results[1]["en_dev"], [r["en_dev"] for r in results]
    bench = workdir / "benchmarks/slice/finetune/default/en-fr/seed1/ner/grid_bs32/seed1.tsv"
    assert bench.is_file()
