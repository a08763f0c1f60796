# Section 5 on transformers checkpoints (analysis.external_models; docs/usage.md): Figure 6
# (retrieval after an orthogonal map; for a multilingual model also without one, raw and after
# the mean-difference shift) and Figure 7 (CKA per layer beside a random encoder of the same
# architecture, length-controlled beside it) for every row and each of its languages with the
# source language. No pretraining, no fine-tuning: `snakemake section5_external`.
# Results: R/analysis/external/<row>/{retrieval,cka}/<src>-<lang>.json; report: R/report/external/.

EXTERNAL = {r.name: r for r in xcfg.external.rows(config)}
EXTERNAL_JOBS = xcfg.external.jobs(config)
# each weights file's sha256 as planning sees it (cached by size and mtime): a job checks its files
# against it, and a replaced checkpoint changes the params of exactly the jobs that read it
EXTERNAL_SHA256 = (
    xcfg.external.weights_digests(config, Path(".snakemake/xling/weights_sha256.json")) if EXTERNAL else {}
)
EXTERNAL_REPORT = {
    "figure6_csv": f"{R}/report/external/figure6.csv",
    "figure7_csv": f"{R}/report/external/figure7.csv",
    "section5_md": f"{R}/report/external/section5.md",
    "findings_md": f"{R}/report/external/findings.md",
    "findings_csv": f"{R}/report/external/findings.csv",
}


def external_row(w):
    """The row's params: its name, role, label, the model directory of each language it reads, and
    the sha256 of the job's two weights files as planning saw them."""
    r = EXTERNAL[w.row]
    sha256 = {lang: EXTERNAL_SHA256[r.name][lang] for lang in (SRC, w.target)}
    return {"name": r.name, "role": r.role, "label": r.label, "models": dict(r.models), "sha256": sha256}


def external_inputs(w):
    """The files of the source's and the target's model directories that say which model it is
    (config.json and the weights): a replaced checkpoint reruns the row's jobs."""
    out = {}
    for side, lang in (("source", SRC), ("target", w.target)):
        d = Path(EXTERNAL[w.row].models[lang])
        weights = xcfg.external.weights_file(d)
        out.update({f"{side}_config": str(d / "config.json"), f"{side}_weights": str(weights)})
    return out


def external_results(kind):
    return [f"{R}/analysis/external/{row}/{kind}/{SRC}-{t}.json" for row, t in EXTERNAL_JOBS]


EXTERNAL_CONSTRAINTS = {
    "row": "|".join(EXTERNAL) or "NONE",
    "target": "|".join(sorted({t for _, t in EXTERNAL_JOBS})) or "NONE",
}


rule external_retrieval:
    """Figure 6 for one row and language: the target read by its model, mapped onto the source's
    on the parallel rows (XNLI-15way's or PUD's), retrieving Tatoeba translations."""
    input:
        unpack(external_inputs),
        way15=PARALLEL_ROWS,
        tatoeba_x=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[0]),
        tatoeba_en=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[1]),
    output:
        result=f"{R}/analysis/external/{{row}}/retrieval/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/external/{{row}}/retrieval/{SRC}-{{target}}.log",
    wildcard_constraints:
        **EXTERNAL_CONSTRAINTS,
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        row=external_row,
        source=SRC,
        target=lambda w: w.target,
        rows=AN["align_sentences"],
        norm_steps=AN["iterative_norm_steps"],
        random_seed=AN["random_seed"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/external_retrieval.py"


rule external_cka:
    """Figure 7 for one row and language: linear CKA per layer of parallel sentences
    under the row's models (a monolingual pair, or one multilingual model read as both
    languages), beside the target side read by an untrained model of the same architecture."""
    input:
        unpack(external_inputs),
        way15=PARALLEL_ROWS,
    output:
        result=f"{R}/analysis/external/{{row}}/cka/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/external/{{row}}/cka/{SRC}-{{target}}.log",
    wildcard_constraints:
        **EXTERNAL_CONSTRAINTS,
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        row=external_row,
        source=SRC,
        target=lambda w: w.target,
        rows=AN["cka_sentences"],
        random_seed=AN["random_seed"],
        bootstrap=AN["cka_bootstrap"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/external_cka.py"


rule external_report:
    """The external rows' Figure 6 and 7 points (CSV, each row marked with its checkpoints and
    their sha256), their tables and the paper's Section 5 claims checked on them."""
    input:
        retrieval=external_results("retrieval"),
        cka=external_results("cka"),
    output:
        **EXTERNAL_REPORT,
    log:
        f"{LOGS}/report/external.log",
    conda:
        "../../envs/report.yaml"
    threads: 1
    resources:
        **res_single("report"),
    script:
        "../scripts/external_report.py"


rule section5_external:
    input:
        list(EXTERNAL_REPORT.values()) if EXTERNAL_JOBS else [],
