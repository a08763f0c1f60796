# Liu et al. 2020, Sections 3 and 4.3: XNLI fine-tuning of each MLM (its upper layers) and m-BERT,
# scored on every language with and without the mean difference shift, and a BiLSTM-max classifier
# over each static model's vectors; Table 4. Outputs: R/liu/xnli/, R/report/liu2020/table4.*, xnli.*


def liu_xnli_files():
    """Every XNLI job's task files: the source language's train, each language's dev and test, and
    the segmenter where one is needed (XNLI sentences are segmented as the corpus was)."""
    d = {"train": task_file("xnli", SRC, "train")}
    for l in LIU_LANGS:
        d[f"dev_{l}"] = task_file("xnli", l, "dev")
        d[f"test_{l}"] = task_file("xnli", l, "test")
    d.update(segmenter_inputs(*LIU_LANGS))
    return d


def liu_xnli_inputs(w):
    """The MLM's files, the source language's XNLI train and every language's dev, test and BPE text."""
    d = {**liu_mlm_files(w.size, w.window), **liu_xnli_files()}
    for l in LIU_LANGS:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
    return d


def liu_xnli_static_inputs(w):
    """The static vectors, the BPE they are vectors of, the source language's XNLI train and every
    language's dev and test."""
    return {
        "vectors": f"{R}/liu/static/{w.method}/n{w.size}/vectors.vec",
        "bpe": f"{R}/liu/bpe/n{w.size}/bpe.json",
        **liu_xnli_files(),
    }


def liu_xnli_mbert_inputs(w):
    """m-BERT's files, the XNLI files and every language's sample lines (its means)."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]], **liu_xnli_files()}
    for l in LIU_LANGS:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    return d


def liu_xnli_static_params():
    """The static models' XNLI classifier (liu2020.xnli.static) with finetune.xnli's length and caps."""
    ft, spec = config["finetune"], config["finetune"]["xnli"]
    return {
        **LIU["xnli"]["static"],
        "epochs": spec["epochs"],
        "max_train_examples": spec["max_train_examples"],
        "max_eval_examples": ft["max_eval_examples"],
        "max_seq_len": ft["max_seq_len"],
        "seed": int(FSEED0),
    }


def liu_xnli_job():
    """xling.finetune.FinetuneJob of the study's XNLI fine-tuning (finetune.xnli's length and
    schedule, liu2020.xnli's cell)."""
    hp = Hyperparameters.of(liu2020.xnli_hp(config))
    return FinetuneJob.build(config["finetune"], "xnli", SRC, SRC, hp, FSEED0, tokenize_params(*LIU_LANGS))


def liu_xnli_results():
    """The XNLI results the report reads: each MLM's and static model's, then m-BERT's when configured."""
    ours = [f"{R}/liu/xnli/n{n}/{m}.json" for n in LIU_SIZES for m in [*LIU_WINDOWS, *LIU_STATIC]]
    return ours + ([f"{R}/liu/xnli/mbert.json"] if LIU_MBERT else [])


# What every XNLI job with the shift is given, our MLMs' and m-BERT's alike
LIU_XNLI_SHIFT = {
    "job": liu_xnli_job().tracked(),
    "languages": LIU_LANGS,
    **{k: LIU["xnli"][k] for k in ("alphas", "sentences", "batch_size", "all_layers")},
}

if LIU_XNLI_EXTRA:

    rule liu_taskdata_xnli:
        """XNLI dev and test of the study's languages that Table 1 does not use."""
        input:
            xnli=downloaded("xnli"),
            multinli=downloaded("multinli"),
        output:
            [f"{R}/tasks/xnli/{l}/{s}.tsv" for l in LIU_XNLI_EXTRA for s in ("dev", "test")],
        log:
            f"{LOGS}/tasks/xnli_liu2020.log",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            languages=LIU_XNLI_EXTRA,
            source=SRC,
        script:
            "../scripts/liu_taskdata_xnli.py"


rule liu_xnli:
    """XNLI fine-tuning of one MLM (upper layers), scored on every language with and without the
    mean difference shift."""
    input:
        unpack(liu_xnli_inputs),
    output:
        result=f"{R}/liu/xnli/n{{size}}/{{window}}.json",
    log:
        f"{LOGS}/liu/xnli/n{{size}}/{{window}}.log",
    wildcard_constraints:
        size=r"\d+",
        window="|".join(LIU_WINDOWS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("finetune")
    resources:
        **res("finetune"),
    params:
        **LIU_XNLI_SHIFT,
        meta=lambda w: {"model": f"mlm_{w.window}", "size": int(w.size)},
        freeze=liu2020.xnli_freeze(config) if LIU_LANGS else 0,
    script:
        "../scripts/liu_xnli.py"


rule liu_xnli_static:
    """XNLI of one static model: a BiLSTM-max classifier over its fixed vectors, trained on the
    source language, scored on every language."""
    input:
        unpack(liu_xnli_static_inputs),
    output:
        result=f"{R}/liu/xnli/n{{size}}/{{method}}.json",
    log:
        f"{LOGS}/liu/xnli/n{{size}}/{{method}}.log",
    wildcard_constraints:
        size=r"\d+",
        method="|".join(LIU_STATIC),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("finetune")
    resources:
        **res("finetune"),
    params:
        meta=lambda w: {"model": w.method, "size": int(w.size)},
        languages=LIU_LANGS,
        tokenize=tokenize_params(*LIU_LANGS),
        classifier=liu_xnli_static_params(),
    script:
        "../scripts/liu_xnli_static.py"


if LIU_MBERT:

    rule liu_xnli_mbert:
        """Table 4 on m-BERT itself: fine-tuned above its first layers, scored with and without the shift."""
        input:
            unpack(liu_xnli_mbert_inputs),
        output:
            result=f"{R}/liu/xnli/mbert.json",
        log:
            f"{LOGS}/liu/xnli/mbert.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("finetune")
        resources:
            **res("finetune"),
        params:
            **LIU_XNLI_SHIFT,
            meta={"model": "mbert", "size": None},
            freeze=LIU_MBERT["freeze_layers"],
        script:
            "../scripts/liu_xnli_mbert.py"


rule liu_xnli_report:
    input:
        liu_xnli_results(),
    output:
        table_md=f"{R}/report/liu2020/table4.md",
        table_csv=report(f"{R}/report/liu2020/table4.csv", category=LIU_CATEGORY, caption=caption("liu2020_table4.rst")),
        fig_png=report(f"{R}/report/liu2020/xnli.png", category=LIU_CATEGORY, caption=caption("liu2020_xnli.rst")),
        fig_pdf=f"{R}/report/liu2020/xnli.pdf",
        fig_csv=report(f"{R}/report/liu2020/xnli.csv", category=LIU_CATEGORY, caption=caption("liu2020_xnli.rst")),
    log:
        f"{LOGS}/report/liu2020_xnli.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        note=REPORT_NOTE,
    script:
        "../scripts/liu_xnli_report.py"
