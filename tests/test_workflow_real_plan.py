"""The real-language study as `make demo-real` plans it (config/real.yaml on config/config.yaml, a dry
run from an empty directory): every novel through TEI extraction, every model the seeds ask for on
the pairs and rows the study trains, UD parsing only, no Wiki-CC, the monolingual models of
Section 5, and the report."""

from __future__ import annotations

from support.slice import job_counts, snakemake
from xling import config as xcfg
from xling.config import REPO

REAL = REPO / "config" / "real.yaml"


def test_the_real_study_plans_on_the_papers_stages(tmp_path):
    (tmp_path / "results" / "real" / "mirror").mkdir(parents=True)  # make demo-real fills it first
    proc = snakemake(tmp_path, "-n", "--cores", "1", "--configfile", str(REAL), "--", "all")
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout)
    cfg = xcfg.load(REPO / "config" / "config.yaml", REAL)
    novels = sum(len(v) for v in cfg["preprocess"]["corpus_files"].values())
    models = xcfg.bilingual_models(cfg)
    # seeds per pair: en-fr's central rows more than its other rows and than en-de's and en-ru's
    central = ("default", "no_anchors", "sep_l1_6", "sep_emb_l1_6")
    fr = {s: len(xcfg.row_seeds(cfg, s, "en-fr")) for s in central}
    assert min(fr.values()) >= 5 and all(len(xcfg.row_seeds(cfg, s, p)) < min(fr.values())
                                         for p in ("en-de", "en-ru") for s in central)
    assert sum(n for r, n in counts.items() if r.startswith("download_eltec_")) == novels == 24 + 24 + 24 + 19
    assert counts["tei_extract"] == 4  # one job a language, its novels in order
    assert counts["pretrain"] == len(models)
    assert not any(s == "wiki_cc" for s, _, _ in models)
    assert {p for _, p, _ in models} == {"en-fr", "en-de", "en-ru"}
    # one parsing grid job a bilingual Table 1 model (one batch size, one fine-tuning seed)
    assert counts["finetune_grid_parsing"] == len(models)
    assert not {r for r in counts if r.startswith(("finetune_grid_xnli", "finetune_grid_ner"))}
    assert counts["pretrain_mono"] == 4
    assert counts["table1"] == counts["table1_extra_pud"] == counts["findings"] == 1
    # Section 5 on PUD and Tatoeba: Figures 6 and 7 on the three pairs, Figure 4 where FreeDict has
    # a dictionary (en-fr, en-ru)
    assert counts["pud_rows"] == 1 and counts["analysis_retrieval"] == counts["analysis_cka"] == 3
    assert counts["analysis_words"] == 2
