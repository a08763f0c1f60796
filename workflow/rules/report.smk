# Table 1, the paper-vs-reproduction table and Figure 3: reads result.json files only (no GPU, no model).


rule report:
    input:
        results=finetune_results(),
    output:
        **reported({k: f"{R}/report/{v}" for k, v in REPORT_FILES.items()}),
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
        results=finetune_results(),
        words=[f"{R}/analysis/words/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        transfer=figure5_results(),
        retrieval=[f"{R}/analysis/retrieval/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        cka=[f"{R}/analysis/cka/{SRC}-{t}.json" for t in AN_TARGETS],
    output:
        **reported({k: f"{R}/report/{v}" for k, v in FINDINGS_FILES.items()}),
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
    script:
        "../scripts/findings.py"


rule compute_ledger:
    """What the run cost per rule and per model, beside the pretraining hours the budget planned.
    The benchmark files are read beside the declared outputs (see xling.report.ledger for why
    they are not inputs)."""
    input:
        [out for out, _ in LEDGER_JOBS],
    output:
        **reported({k: f"{R}/report/{v}" for k, v in LEDGER_FILES.items()}),
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
