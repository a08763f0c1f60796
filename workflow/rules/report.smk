# The report stage: Table 1 beside the paper and Figure 3, the findings table, Figures 4-8, the
# shared-space curve, the anchor counts and the compute ledger. Reads result files only (no GPU, no
# model). Every file under R/report/ is named here; `report(...)` marks what `snakemake --report`
# shows, with its caption (workflow/report/).

from xling.cluster.budget import planned_rate, pretrain_device, pretrain_estimates

TABLE1 = "1. Table 1: zero-shot transfer"
SECTION5 = "3. Section 5: monolingual models"


def caption(name):
    return f"{workflow.basedir}/workflow/report/{name}"


def figure_pair(name, number, folder=None):
    """A figure's PNG and PDF (keys ``<name>_png``, ``<name>_pdf``; ``png``, ``pdf`` without a
    name). In R/report/ the PNG is shown in the Snakemake report; a folder's copy is not."""
    key = f"{name}_" if name else ""
    base = f"{R}/report/{folder}" if folder else f"{R}/report"
    png, pdf = f"{base}/figure{number}.png", f"{base}/figure{number}.pdf"
    if not folder:
        png = report(png, category=SECTION5, caption=caption(f"wu2020_figure{number}.rst"))
    return {f"{key}png": png, f"{key}pdf": pdf}


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
        "note": DEMO_NOTE,
        # cells left out for want of a licensed corpus: task -> target language -> what to do
        "unavailable": {"ner": {l: f"needs licensed data: {why}" for l, why in NER_UNAVAILABLE.items()}},
    }


def section5_results():
    """The Section 5 result files the report reads (Figures 4-8)."""
    return {
        "words": [f"{R}/analysis/words/{SRC}-{t}.json" for t in AN_RETRIEVAL],
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
        "note": " ".join(x for x in (DEMO_NOTE, note) if x),
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


def section5_figures():
    """Figure number -> (the results it shows, its files under R/report/figures/ by output name)."""
    r = section5_results()
    figs = {
        "4": (
            r["words"],
            {
                **figure_pair("fig4a", "4a", "figures"),
                **figure_pair("fig4b", "4b", "figures"),
                "csv": f"{R}/report/figures/figure4.csv",
            },
        ),
        "6": (r["retrieval"], figure_pair("", 6, "figures")),
        "7": (r["cka"], figure_pair("", 7, "figures")),
    }
    if FIG5_PAIRS:
        figs["5"] = (r["transfer"], {**figure_pair("", 5, "figures"), "csv": f"{R}/report/figures/figure5.csv"})
        figs["8"] = (r["transfer"], figure_pair("", 8, "figures"))
    return figs if AN_TARGETS else {}


for _n, (_results, _files) in section5_figures().items():

    rule:
        name:
            f"wu2020_figure{_n}"
        input:
            results=_results,
        output:
            **_files,
        log:
            f"{LOGS}/report/figures/figure{_n}.log",
        conda:
            "../../envs/report.yaml"
        threads: 1
        resources:
            **res_single("report"),
        params:
            figure=_n,
            note=DEMO_NOTE,
        script:
            "../scripts/section5_figure.py"


rule anchors_table:
    input:
        # settings with the same BPE (the Sep* rows and Default anchors) share one data directory
        [f"{R}/bpe/{canonical(s)}/{p}/anchors.json" for p in PAIRS for s in SETTINGS],
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
        entries=[[p, setting(s)["label"]] for p in PAIRS for s in SETTINGS],
    script:
        "../scripts/bpe_anchors_table.py"


rule analysis_report:
    input:
        **section5_results(),
    output:
        **figure_pair("fig4a", "4a"),
        **figure_pair("fig4b", "4b"),
        **(
            {**figure_pair("fig5", 5), **figure_pair("fig8", 8), "fig5_csv": f"{R}/report/figure5.csv"}
            if FIG5_PAIRS
            else {}
        ),
        **figure_pair("fig6", 6),
        **figure_pair("fig7", 7),
        fig4_csv=f"{R}/report/figure4.csv",
        tables_md=report(f"{R}/report/analysis.md", category=SECTION5, caption=caption("wu2020_analysis.rst")),
    log:
        f"{LOGS}/report/analysis.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        note=DEMO_NOTE,
    script:
        "../scripts/analysis_report.py"


rule shared_space_report:
    input:
        [f"{R}/analysis/shared_space/{s}/{p}/seed{seed}.json" for s, p, seed in SHARED_MODELS],
    output:
        shared_png=report(f"{R}/report/shared_space.png", category=SECTION5, caption=caption("wu2020_shared_space.rst")),
        shared_pdf=f"{R}/report/shared_space.pdf",
        shared_csv=f"{R}/report/shared_space.csv",
    log:
        f"{LOGS}/report/shared_space.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels={s: config["settings"][s]["label"] for s in SHARED_SPACE["settings"]},
        note=DEMO_NOTE,
    script:
        "../scripts/shared_space_report.py"


# The compute ledger: what the pretraining, fine-tuning and BPE jobs cost (xling.report.ledger)


def ledger_job(output, rule, family, model=(None, None), label=None, **wildcards):
    """A job the ledger counts: its declared output (the ledger's input, so that the ledger runs
    after it), the model it belongs to (setting, pair) and where its rule's benchmark file is;
    ``label``: the rule's name in the ledger (every task's grid rule counts as finetune_grid)."""
    gpus = int(config["rule_resources"][family]["gpus"])
    bench = str(getattr(rules, rule).benchmark).format(**wildcards)
    return output, {"rule": label or rule, "setting": model[0], "pair": model[1], "gpus": gpus, "benchmark": bench}


def ledger_jobs():
    """Pretraining (bilingual, monolingual), fine-tuning (cells and grids) and BPE jobs, as ledger_job pairs."""
    jobs = [
        ledger_job(
            f"{R}/pretrain/{s}/{p}/seed{ps}/done.json", "pretrain", "pretrain", (s, p), setting=s, pair=p, pseed=ps
        )
        for s, p, ps in BILINGUAL
    ]
    jobs += [
        ledger_job(f"{R}/pretrain/mono/{m}/done.json", "pretrain_mono", "pretrain", ("mono", m), mono=m) for m in MONO
    ]
    jobs += [
        ledger_job(
            finetune_result(s, p, t, h, ps, fs),
            "finetune",
            "finetune",
            (s, p),
            setting=s,
            pair=p,
            task=t,
            hp_id=h,
            pseed=ps,
            fseed=fs,
        )
        for s, p, t, h, ps, fs in finetune_cells()
        if t in CELL_TASKS
    ]
    jobs += [
        ledger_job(
            finetune_result(s, p, t, grid_hp_ids(t, bs)[0], ps, fs),
            f"finetune_grid_{t}",
            "finetune",
            (s, p),
            label="finetune_grid",
            setting=s,
            pair=p,
            bs=bs,
            pseed=ps,
            fseed=fs,
        )
        for s, p, t, bs, ps, fs in grid_jobs()
    ]
    bpe_dirs = dict.fromkeys((canonical(s), p) for s, p, _ in BILINGUAL if not xcfg.is_prime(p))
    jobs += [
        ledger_job(f"{R}/bpe/{s}/{p}/bpe.json", "bpe", "bpe", setting=s, src=pair_langs(p)[0], tgt=pair_langs(p)[1])
        for s, p in bpe_dirs
    ]
    jobs += [
        ledger_job(f"{R}/bpe/mono/{l}/bpe.json", "bpe_mono", "bpe", lang=l)
        for l in dict.fromkeys(xcfg.data_language(m) for m in MONO)
    ]
    return jobs


def planned_pretrain_hours():
    """The budget's hours per pretrained model, all its seeds together (no margin), and the
    throughput they assume."""
    rate = planned_rate(config, pretrain_device(config))
    hours = {}
    for e in pretrain_estimates(config, rate, margin=1.0):
        hours[e.job.model] = hours.get(e.job.model, 0.0) + e.hours
    return {k: round(v, 4) for k, v in hours.items()}, rate.basis


LEDGER_JOBS = ledger_jobs()
PLANNED_PRETRAIN_HOURS, PLANNING_BASIS = planned_pretrain_hours()


rule compute_ledger:
    """What the run cost per rule and per model, beside the pretraining hours the budget planned.
    The benchmark files are read beside the declared outputs (see xling.report.ledger for why
    they are not inputs)."""
    input:
        [out for out, _ in LEDGER_JOBS],
    output:
        ledger_md=report(f"{R}/report/compute.md", category="4. Compute", caption=caption("wu2020_compute.rst")),
        ledger_csv=f"{R}/report/compute.csv",
    log:
        f"{LOGS}/report/compute.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        entries=[entry for _, entry in LEDGER_JOBS],
        planned=PLANNED_PRETRAIN_HOURS,
        planning_basis=PLANNING_BASIS,
        labels={"mono": "Monolingual", **{s: config["settings"][s]["label"] for s in SETTINGS}},
        note=DEMO_NOTE,
    script:
        "../scripts/report_ledger.py"


def report_targets():
    """Table 1, the findings, the anchor counts and the ledger (rule all)."""
    return [*rules.table1.output, *rules.findings.output, *rules.anchors_table.output, *rules.compute_ledger.output]


def analysis_report_targets():
    """Figures 4-8 and the shared-space curve, where the config has them (rule all)."""
    return [
        *(rules.analysis_report.output if AN_TARGETS else ()),
        *(rules.shared_space_report.output if SHARED_MODELS else ()),
    ]
