# Liu et al. 2020, "A Study of Cross-Lingual Ability and Language-specific Information in
# Multilingual BERT", Section 3 on this pipeline's stages: each language's first N training
# sentences (liu2020.sizes), one joint BPE and one joint MLM per size and context window, word2vec
# and GloVe on the same BPE text, and word retrieval (MRR) from the source language to each other
# one (Section 3); token translation by the mean difference shift (Section 4.2). Outputs:
# R/liu/..., R/report/liu2020/. Target: `snakemake liu2020`.


rule liu_sample:
    input:
        f"{R}/corpus/{{lang}}/wiki.train.txt",
    output:
        f"{R}/liu/corpus/n{{size}}/{{lang}}.train.txt",
    log:
        f"{LOGS}/liu/corpus/n{{size}}/{{lang}}.log",
    wildcard_constraints:
        size=r"\d+",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("preprocess"),
    params:
        lines=lambda w: int(w.size),
    script:
        "../scripts/liu_sample.py"


rule liu_bpe:
    input:
        unpack(liu_bpe_inputs),
    output:
        manifest=f"{R}/liu/bpe/n{{size}}/bpe.json",
        texts=[f"{R}/liu/bpe/n{{size}}/{l}.{s}.bpe" for l in LIU_LANGS for s in BPE_SPLITS],
    log:
        f"{LOGS}/liu/bpe/n{{size}}.log",
    wildcard_constraints:
        size=r"\d+",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("bpe")
    resources:
        **res("bpe"),
    params:
        mode="joint",
        merges=LIU["bpe_merges"],
        languages=LIU_LANGS,
    script:
        "../scripts/bpe_build.py"


rule liu_binarize:
    input:
        unpack(lambda w: bpe_texts(f"{R}/liu/bpe/n{w.size}", LIU_LANGS)),
    output:
        shared_dict=f"{R}/liu/bin/n{{size}}/dict.txt",
        lang_dicts=[f"{R}/liu/bin/n{{size}}/dict.{l}.txt" for l in LIU_LANGS],
        data=[f"{R}/liu/bin/n{{size}}/{l}/{s}.{x}" for l in LIU_LANGS for s in BPE_SPLITS for x in ("bin", "idx")],
    log:
        f"{LOGS}/liu/binarize/n{{size}}.log",
    wildcard_constraints:
        size=r"\d+",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    params:
        languages=LIU_LANGS,
        copies=[],
    script:
        "../scripts/binarize.py"


rule liu_pretrain:
    """One joint MLM on every language of a data size, at one context window."""
    input:
        dictionary=f"{R}/liu/bin/n{{size}}/dict.txt",
    output:
        done=f"{R}/liu/pretrain/n{{size}}/{{window}}/done.json",
        best=f"{R}/liu/pretrain/n{{size}}/{{window}}/checkpoint_best.pt",
    log:
        f"{LOGS}/liu/pretrain/n{{size}}/{{window}}.log",
    wildcard_constraints:
        size=r"\d+",
        window="|".join(LIU_WINDOWS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    params:
        data_dirs=lambda w: [f"{R}/liu/bin/n{w.size}"],
        setting={"separate": {"embeddings": False, "layers": 0}},
        model=xcfg.liu_model(config),
        pretrain=lambda w: xcfg.liu_pretrain(config, w.window),
        languages=LIU_LANGS,
        seed=PSEED0,
    script:
        "../scripts/pretrain.py"


rule liu_static:
    """word2vec or GloVe on every language's BPE training text of a data size."""
    input:
        texts=lambda w: [f"{R}/liu/bpe/n{w.size}/{l}.train.bpe" for l in LIU_LANGS],
    output:
        vec=f"{R}/liu/static/{{method}}/n{{size}}/vectors.vec",
    log:
        f"{LOGS}/liu/static/{{method}}/n{{size}}.log",
    wildcard_constraints:
        size=r"\d+",
        method="|".join(LIU_STATIC),
    conda:
        "../../envs/fairseq.yaml"
    # word2vec with one worker is deterministic; several split the corpus in a timing-dependent order
    threads: 1
    resources:
        **res_single("analysis"),
    params:
        method=lambda w: w.method,
        settings=LIU["static"],
        seed=PSEED0,
    script:
        "../scripts/liu_static.py"


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


rule liu_report:
    input:
        [f"{R}/liu/retrieval/{m}/n{n}.json" for n in LIU_SIZES for m in LIU_MODELS],
    output:
        **{k: f"{R}/report/{v}" for k, v in LIU_REPORT.items()},
    log:
        f"{LOGS}/report/liu2020.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        note=DEMO_NOTE,
    script:
        "../scripts/liu_report.py"


rule liu_translation:
    """Token translation by the mean difference shift: every direction, layer and alpha."""
    input:
        unpack(liu_translation_inputs),
    output:
        result=f"{R}/liu/translation/n{{size}}/{{window}}.json",
    log:
        f"{LOGS}/liu/translation/n{{size}}/{{window}}.log",
    wildcard_constraints:
        size=r"\d+",
        window="|".join(LIU_WINDOWS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("analysis")
    resources:
        **res("analysis"),
    params:
        meta=lambda w: {"model": f"mlm_{w.window}", "size": int(w.size)},
        directions=[list(d) for d in LIU_DIRECTIONS],
        layers=xcfg.liu_translation_layers(config),
        alphas=LIU["translation"]["alphas"],
        rows=LIU["translation"]["rows"],
        sentences=LIU["translation"]["sentences"],
        tokenize=tokenize_params(*LIU_TR_LANGS),
        max_seq_len=LIU["translation"]["max_seq_len"],
        batch_size=LIU["translation"]["batch_size"],
    script:
        "../scripts/liu_translation.py"


if LIU_MBERT:

    rule liu_translation_mbert:
        """Token translation by the mean difference shift on m-BERT itself: every direction, layer and alpha."""
        input:
            unpack(liu_translation_mbert_inputs),
        output:
            result=LIU_MBERT_RESULT,
        log:
            f"{LOGS}/liu/translation/mbert.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("analysis")
        resources:
            **res("analysis"),
        params:
            meta={"model": "mbert", "size": None},
            directions=[list(d) for d in LIU_DIRECTIONS],
            alphas=LIU["translation"]["alphas"],
            rows=LIU["translation"]["rows"],
            sentences=LIU["translation"]["sentences"],
            max_seq_len=LIU["translation"]["max_seq_len"],
            batch_size=LIU["translation"]["batch_size"],
        script:
            "../scripts/liu_translation_mbert.py"


rule liu_translation_report:
    input:
        liu_translation_results(),
    output:
        **{k: f"{R}/report/{v}" for k, v in LIU_TR_REPORT.items()},
    log:
        f"{LOGS}/report/liu2020_translation.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        layers=xcfg.liu_model(config)["layers"],
        figure_direction=LIU["translation"]["figure_direction"],
        note=DEMO_NOTE,
    script:
        "../scripts/liu_translation_report.py"


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
        meta=lambda w: {"model": f"mlm_{w.window}", "size": int(w.size)},
        job=liu_xnli_job(),
        languages=LIU_LANGS,
        freeze=xcfg.liu_xnli_freeze(config) if LIU_LANGS else 0,
        alphas=LIU["xnli"]["alphas"],
        sentences=LIU["xnli"]["sentences"],
        batch_size=LIU["xnli"]["batch_size"],
        all_layers=LIU["xnli"]["all_layers"],
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
            meta={"model": "mbert", "size": None},
            job=liu_xnli_job(),
            languages=LIU_LANGS,
            freeze=LIU_MBERT["freeze_layers"],
            alphas=LIU["xnli"]["alphas"],
            sentences=LIU["xnli"]["sentences"],
            batch_size=LIU["xnli"]["batch_size"],
            all_layers=LIU["xnli"]["all_layers"],
        script:
            "../scripts/liu_xnli_mbert.py"


rule liu_xnli_report:
    input:
        liu_xnli_results(),
    output:
        **{k: f"{R}/report/{v}" for k, v in LIU_XNLI_REPORT.items()},
    log:
        f"{LOGS}/report/liu2020_xnli.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        note=DEMO_NOTE,
    script:
        "../scripts/liu_xnli_report.py"
