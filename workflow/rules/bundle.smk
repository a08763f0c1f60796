# Results bundles (docs/report.md): `snakemake bundle` writes R/bundle.tar.gz, the files the
# report stage reads and nothing it could recompute (every input of the report rules, and the
# benchmark files the ledger reads beside them), with the resolved config (also written beside it,
# R/bundle.config.yaml) and a manifest; beside them, every table of the report and the CSV of each
# figure (its plotted points): carried, never unpacked, so that a report rebuilt from the bundle
# can be checked against them byte for byte (`make check-bundle`). With `--config
# bundle=<archive>` (and the bundle's config as --configfile), rule unpack_bundle makes those files
# instead of the jobs that made them, so `snakemake ... report` plans the report jobs only.


def report_rule_names():
    """The rules of the report stage this config has (Wu et al.'s, then Liu et al.'s)."""
    names = ["table1", *extra_table_rules(), "findings", "anchors_table", "compute_ledger"]
    names += ["analysis_report"] if AN_TARGETS else []
    names += ["shared_space_report"] if SHARED_MODELS else []
    if LIU_LANGS:
        names += ["liu_report", *(["liu_translation_report"] if LIU_DIRECTIONS else []), "liu_xnli_report"]
    return names


def report_stage_inputs():
    return sorted({str(f) for name in report_rule_names() for f in getattr(rules, name).input})


# what the report writes as text: its tables (md, csv, tex) and each figure's CSV; the drawings
# (png, pdf) are left out, their numbers being that CSV
REPORT_TEXT = (".md", ".csv", ".tex")


def report_texts():
    """The report stage's tables and figures' numbers, as the bundle carries them."""
    outputs = {str(f) for name in report_rule_names() for f in getattr(rules, name).output}
    return sorted(f for f in outputs if f.endswith(REPORT_TEXT))


def all_reports():
    """Every table and figure of the report stage (target `report`)."""
    return [*report_targets(), *analysis_report_targets(), *liu_targets()]


rule bundle:
    input:
        results=report_stage_inputs(),
        report=report_texts(),
    output:
        archive=f"{R}/bundle.tar.gz",
        config=f"{R}/bundle.config.yaml",
    log:
        f"{LOGS}/report/bundle.log",
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        **res_single("report"),
    params:
        # read beside the declared outputs, as the ledger reads them (xling.report.ledger)
        benchmarks=[entry["benchmark"] for _, entry in LEDGER_JOBS],
        ner_unavailable=NER_UNAVAILABLE,
        config=dict(config),
        repo=workflow.basedir,
    script:
        "../scripts/bundle.py"


if BUNDLE:

    rule unpack_bundle:
        input:
            config["bundle"],
        output:
            BUNDLE.files,
        log:
            f"{LOGS}/report/unpack_bundle.log",
        conda:
            "../../envs/report.yaml"
        threads: 1
        resources:
            **res_single("report"),
        params:
            config=dict(config),
        script:
            "../scripts/unpack_bundle.py"

    # the bundle's files come from the archive, never from the jobs that made them
    ruleorder:
        unpack_bundle
        > pretrain
        > pretrain_mono
        > bpe
        > bpe_mono
        > shared_space
        > analysis_words
        > analysis_retrieval
        > analysis_cka
        > transfer
        > liu_retrieval
        > liu_translation
        > liu_xnli
        > liu_xnli_static

    if LIU_MBERT:

        ruleorder: unpack_bundle > liu_translation_mbert > liu_xnli_mbert

    for _task in TASKS:
        workflow.ruleorder("unpack_bundle", f"finetune_grid_{_task}")
