# The report stage: Table 1 beside the paper and Figure 3, the findings table, the ablation
# targets' parts of Table 1 and the anchor counts (here); Section 5's figures and the shared-space
# curve (report_section5.smk); the compute ledger (report_ledger.smk). Reads result files only (no
# GPU, no model). Every file under R/report/ is named in these files; `report(...)` marks what
# `snakemake --report` shows, with its caption (workflow/report/).

TABLE1 = "1. Table 1: zero-shot transfer"


def caption(name):
    return f"{workflow.basedir}/workflow/report/{name}"


def table1_params():
    """How Table 1 is aggregated, as rules report and findings both receive it."""
    return {
        "settings": SETTINGS,
        "labels": {s: config["settings"][s]["label"] for s in SETTINGS},
        "pairs": PAIRS,
        "tasks": TASKS,
        "top_k": config["finetune"]["top_k"],
        "baseline": "default",
        "source": SRC,
        "note": REPORT_NOTE,
        # cells left out for want of a licensed corpus: task -> target language -> what to do
        "unavailable": {"ner": {l: f"needs licensed data: {why}" for l, why in NER_UNAVAILABLE.items()}},
    }


def section5_results():
    """The Section 5 result files the report reads (Figures 4-8)."""
    return {
        "words": [f"{R}/analysis/words/{SRC}-{t}.json" for t in AN_WORDS],
        "transfer": figure5_results(),
        "retrieval": [f"{R}/analysis/retrieval/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        "cka": [f"{R}/analysis/cka/{SRC}-{t}.json" for t in AN_TARGETS],
    }


rule table1:
    input:
        results=finetune_results(),
    output:
        table1_md=f"{R}/report/table1.md",
        table1_csv=report(f"{R}/report/table1.csv", category=TABLE1, caption=caption("wu2020_table1.rst")),
        table1_tex=f"{R}/report/table1.tex",
        vs_md=f"{R}/report/table1_vs_paper.md",
        vs_csv=report(f"{R}/report/table1_vs_paper.csv", category=TABLE1, caption=caption("wu2020_table1_vs_paper.rst")),
        fig_png=report(f"{R}/report/figure3.png", category=TABLE1, caption=caption("wu2020_figure3.rst")),
        fig_pdf=f"{R}/report/figure3.pdf",
        fig_csv=report(f"{R}/report/figure3.csv", category=TABLE1, caption=caption("wu2020_figure3.rst")),
    log:
        f"{LOGS}/report/table1.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        **table1_params(),
    script:
        "../scripts/report.py"


def findings_by_pair():
    """Table 1's claims judged on each pair's column (report.findings_by_pair); a param only where
    set, so the key leaves other runs' findings jobs as they were."""
    return {"by_pair": True} if config["report"]["findings_by_pair"] else {}


rule findings:
    """One row per claim of the paper with our number, its 95% interval and whether it holds."""
    input:
        **section5_results(),
        results=finetune_results(),
    output:
        findings_md=f"{R}/report/findings.md",
        findings_csv=report(
            f"{R}/report/findings.csv",
            category="0. Findings: the paper's claims",
            caption=caption("wu2020_findings.rst"),
        ),
    log:
        f"{LOGS}/report/findings.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        **table1_params(),
        **findings_by_pair(),
        separate={s: config["settings"][s]["separate"] for s in SETTINGS},
        cka_order=[f"{SRC}-{t}" for t in AN_TARGETS],
        language_twins={
            "rows_have": config["model"]["language_embeddings"],
            "twins": xcfg.language_embedding_twins(config),
        },
    script:
        "../scripts/findings.py"


# Ablation targets: one Table 1 row (`table1_row_<setting>`), one language pair's columns
# (`table1_pair_<src>_<tgt>`), one Section 5 figure alone (`wu2020_figure<N>`): each plans exactly
# the jobs its numbers need and writes its part beside the paper's.


def part_params(title, settings=None, pairs=None, note=""):
    return {
        **table1_params(),
        "settings": settings or SETTINGS,
        "pairs": pairs or PAIRS,
        "title": title,
        "note": " ".join(x for x in (REPORT_NOTE, note) if x),
    }


rule table1_row:
    input:
        results=lambda w: finetune_results(settings=[w.setting]),
    output:
        md=f"{R}/report/rows/{{setting}}.md",
        csv=f"{R}/report/rows/{{setting}}.csv",
    log:
        f"{LOGS}/report/rows/{{setting}}.log",
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        **res_single("report"),
    params:
        part=lambda w: part_params(f"Table 1, row {setting(w.setting)['label']}", settings=[w.setting]),
    script:
        "../scripts/table1_part.py"


rule table1_column:
    input:
        results=lambda w: finetune_results(pairs=[w.pair]),
    output:
        md=f"{R}/report/pairs/{{pair}}.md",
        csv=f"{R}/report/pairs/{{pair}}.csv",
    log:
        f"{LOGS}/report/pairs/{{pair}}.log",
    wildcard_constraints:
        pair="|".join(PAIRS),
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        **res_single("report"),
    params:
        part=lambda w: part_params(
            f"Table 1, {w.pair}",
            pairs=[w.pair],
            note="Δ here is over this pair only (the paper's, over all its pairs).",
        ),
    script:
        "../scripts/table1_part.py"


for _setting in SETTINGS:

    rule:
        name:
            f"table1_row_{_setting}"
        input:
            rules.table1_row.output.md.format(setting=_setting),


for _pair in PAIRS:

    rule:
        name:
            f"table1_pair_{_pair.replace('-', '_')}"
        input:
            rules.table1_column.output.md.format(pair=_pair),


rule anchors_table:
    input:
        # settings with the same BPE (the Sep* rows and Default anchors) share one data directory
        [f"{R}/bpe/{canonical(s)}/{p}/anchors.json" for p in PAIRS for s in SETTINGS if xcfg.trains(config, s, p)],
    output:
        anchors_md=report(f"{R}/report/anchors.md", category="2. Anchor points", caption=caption("wu2020_anchors.rst")),
    log:
        f"{LOGS}/report/anchors.log",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("report"),
    params:
        entries=[[p, setting(s)["label"]] for p in PAIRS for s in SETTINGS if xcfg.trains(config, s, p)],
    script:
        "../scripts/bpe_anchors_table.py"


# Table 1 on each extra parsing test set (finetune.parsing.extra_tests; none by default): the
# same aggregation of the same fine-tuning jobs, the score their result.json records for the set
# (xling.config.parsing.extra_tables), in R/report/table1_<table>.{md,csv}.
EXTRA_TABLES = xcfg.parsing.extra_tables(config)


def extra_table_params(table):
    spec = EXTRA_TABLES[table]
    sets = ", ".join(f"{lang}: {tb}" for lang, tb in spec["langs"].items())
    if spec["columns"] is None:
        about = (
            f"UD parsing (LAS) of each pair's target language on its {spec['test']} test set ({sets}), "
            f"scored by Table 1's fine-tuning jobs after training as they score the target's test set: "
            f"the same models, selected on {SRC} dev as Table 1's (nothing is chosen on this set)."
        )
    else:
        about = (
            f"UD parsing (LAS) of {SRC}'s {spec['test']} test set ({sets}) by each pair's model (a column "
            f"is a pair, not a target language): the source language on the same sentences, not "
            f"zero-shot; selected on {SRC} dev as Table 1's."
        )
    return {
        **table1_params(),
        "tasks": ["parsing"],
        "pairs": spec["pairs"],
        "columns": spec["columns"],
        "score": spec["score"],
        "unavailable": {},
        "title": f"Table 1 on the {spec['test']} test set" + ("" if spec["columns"] is None else f" of {SRC}"),
        "about": about,
    }


for _table in EXTRA_TABLES:

    rule:
        name:
            f"table1_extra_{_table}"
        input:
            results=finetune_results(pairs=EXTRA_TABLES[_table]["pairs"], tasks=["parsing"]),
        output:
            md=f"{R}/report/table1_{_table}.md",
            csv=report(
                f"{R}/report/table1_{_table}.csv",
                category=TABLE1,
                caption=caption("wu2020_table1_extra.rst"),
            ),
        log:
            f"{LOGS}/report/table1_{_table}.log",
        conda:
            "../../envs/report.yaml"
        threads: 1
        resources:
            **res_single("report"),
        params:
            table=extra_table_params(_table),
        script:
            "../scripts/table1_extra.py"


def extra_table_rules():
    """The rules of the extra test sets' tables (none by default)."""
    return [f"table1_extra_{t}" for t in EXTRA_TABLES]


def report_targets():
    """Table 1 (and its tables of extra test sets), the findings, the anchor counts and the ledger
    (rule all)."""
    extra = [f for name in extra_table_rules() for f in getattr(rules, name).output]
    return [
        *rules.table1.output,
        *extra,
        *rules.findings.output,
        *rules.anchors_table.output,
        *rules.compute_ledger.output,
    ]
