# Section 5 analyses of the monolingual models (paper 5.1.3 and 5.2): Figure 6 (Tatoeba retrieval
# after Procrustes alignment learnt on XNLI-15way rows) and Figure 7 (linear CKA of parallel
# sentence representations: monolingual, bilingual and random encoders). One job per pair.
# Results: R/analysis/{retrieval,cka}/<pair>.json; figures and tables by rule analysis_report.

if EN_PRIME_SOURCE == "backtranslation":

    rule backtranslate:
        """en': the pivot column of XNLI-15way (human translations of the English rows) translated
        back into English with a pretrained MT model (paper 5.2: en-fr-en')."""
        input:
            way15=downloaded("xnli_15way"),
            model=[downloaded(rid) for rid in AN["backtranslation"]["model_files"]],
        output:
            EN_PRIME_TEXT,
        log:
            f"{LOGS}/analysis/backtranslate.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("analysis")
        resources:
            **res("analysis"),
        params:
            pivot=AN["backtranslation"]["pivot"],
            rows=AN["cka_sentences"],
            beams=AN["backtranslation"]["beams"],
            batch_size=AN["backtranslation"]["batch_size"],
            max_new_tokens=AN["backtranslation"]["max_new_tokens"],
        script:
            "../scripts/backtranslate.py"


rule analysis_retrieval:
    input:
        unpack(retrieval_inputs),
        way15=downloaded("xnli_15way"),
        tatoeba_x=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[0]),
        tatoeba_en=lambda w: downloaded(xcfg.tatoeba_ids(w.target)[1]),
    output:
        result=f"{R}/analysis/retrieval/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/retrieval/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_RETRIEVAL) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        source=SRC,
        target=lambda w: w.target,
        tokenize=lambda w: tokenize_params(SRC, w.target),
        rows=AN["align_sentences"],
        norm_steps=AN["iterative_norm_steps"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/analysis_retrieval.py"


rule analysis_cka:
    input:
        unpack(cka_inputs),
        way15=downloaded("xnli_15way"),
    output:
        result=f"{R}/analysis/cka/{SRC}-{{target}}.json",
    log:
        f"{LOGS}/analysis/cka/{SRC}-{{target}}.log",
    wildcard_constraints:
        target="|".join(AN_TARGETS) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        source=SRC,
        target=lambda w: w.target,
        tokenize=lambda w: tokenize_params(SRC, w.target),
        rows=AN["cka_sentences"],
        random_seed=AN["random_seed"],
        max_seq_len=AN["max_seq_len"],
        batch_size=AN["batch_size"],
    script:
        "../scripts/analysis_cka.py"


rule analysis_report:
    input:
        retrieval=[f"{R}/analysis/retrieval/{SRC}-{t}.json" for t in AN_RETRIEVAL],
        cka=[f"{R}/analysis/cka/{SRC}-{t}.json" for t in AN_TARGETS],
    output:
        **reported({k: f"{R}/report/{v}" for k, v in ANALYSIS_REPORT.items()}),
    log:
        f"{LOGS}/report/analysis.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        note="Synthetic testbed (config/demo.yaml), not the paper's data." if USE_TESTBED else "",
    script:
        "../scripts/analysis_report.py"
