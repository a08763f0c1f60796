# Liu et al. 2020, Section 3: word retrieval (MRR) from the source language to each other one, for
# every MLM and static model of each data size, and for m-BERT where configured; Figures 1 and 3.
# Outputs: R/liu/retrieval/, R/report/liu2020/retrieval.*


def liu_model_kind(model):
    return "static" if model in LIU_STATIC else "mlm"


def liu_retrieval_inputs(w):
    """The model's files, every language's BPE training text and the MUSE dictionaries."""
    if liu_model_kind(w.model) == "static":
        d = {"vectors": f"{R}/liu/static/{w.model}/n{w.size}/vectors.vec"}
    else:
        mlm = liu_mlm_files(w.size, w.model[len("mlm_") :])
        d = {"checkpoint": mlm["checkpoint"], "dictionary": mlm["dictionary"]}
    for l in [SRC, *LIU_RETRIEVED]:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
    for l in LIU_RETRIEVED:
        d[f"dict_{l}"] = downloaded(liu2020.dictionary_id(config, l))
    return d


def liu_retrieval_mbert_inputs(w):
    """m-BERT's files, the sample lines of the smallest size (the source language's included) and
    the MUSE dictionaries."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]]}
    for l in [SRC, *LIU_RETRIEVED]:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    for l in LIU_RETRIEVED:
        d[f"dict_{l}"] = downloaded(liu2020.dictionary_id(config, l))
    return d


rule liu_retrieval:
    input:
        unpack(liu_retrieval_inputs),
    output:
        result=f"{R}/liu/retrieval/{{model}}/n{{size}}.json",
    log:
        f"{LOGS}/liu/retrieval/{{model}}/n{{size}}.log",
    wildcard_constraints:
        size=r"\d+",
        model="|".join(LIU_MODELS) or "NONE",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        kind=lambda w: liu_model_kind(w.model),
        src=SRC,
        langs=LIU_RETRIEVED,
        meta=lambda w: {"model": w.model, "size": int(w.size)},
        sentences=LIU["retrieval"]["sentences"],
        max_words=LIU["retrieval"]["max_words"],
        max_seq_len=LIU["retrieval"]["max_seq_len"],
        batch_size=LIU["retrieval"]["batch_size"],
    script:
        "../scripts/liu_retrieval.py"


if LIU_MBERT_RETRIEVAL:

    use rule liu_retrieval as liu_retrieval_mbert with:
        input:
            unpack(liu_retrieval_mbert_inputs),
        output:
            result=LIU_MBERT_RETRIEVAL,
        log:
            f"{LOGS}/liu/retrieval/mbert.log",
        params:
            kind="mbert",
            meta={"model": "mbert", "size": None},


rule liu_report:
    input:
        [f"{R}/liu/retrieval/{m}/n{n}.json" for n in LIU_SIZES for m in LIU_MODELS]
        + ([LIU_MBERT_RETRIEVAL] if LIU_MBERT_RETRIEVAL else []),
    output:
        png=report(f"{R}/report/liu2020/retrieval.png", category=LIU_CATEGORY, caption=caption("liu2020_retrieval.rst")),
        pdf=f"{R}/report/liu2020/retrieval.pdf",
        csv=report(f"{R}/report/liu2020/retrieval.csv", category=LIU_CATEGORY, caption=caption("liu2020_retrieval.rst")),
    log:
        f"{LOGS}/report/liu2020.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        note=REPORT_NOTE,
    script:
        "../scripts/liu_report.py"
