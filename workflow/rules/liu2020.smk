# Liu et al. 2020, "A Study of Cross-Lingual Ability and Language-specific Information in
# Multilingual BERT", on this pipeline's stages: N sentences of each language's training split
# drawn at random (liu2020.sizes, liu2020.sample), one joint BPE, binarisation and MLM per size and
# context window (the stage rules bpe_mono, binarize_mono and pretrain_mono, reused), word2vec and
# GloVe on the same BPE text, word retrieval (MRR) from the source language to each other one
# (Section 3), token translation by the mean difference shift (Section 4.2) and XNLI with the shift
# (Section 4.3), for our MLMs and m-BERT. Outputs: R/liu/..., R/report/liu2020/. Target:
# `snakemake liu2020`.

from xling.config import liu2020

LIU = config["liu2020"]
LIU_LANGS = liu2020.languages(config)  # source language first
LIU_SIZES = [int(n) for n in LIU["sizes"]]
LIU_WINDOWS = liu2020.window_ids(config)
LIU_RETRIEVED = liu2020.retrieval_languages(config) if LIU_LANGS else []
LIU_STATIC = ["word2vec", "glove"]
LIU_MODELS = [f"mlm_{w}" for w in LIU_WINDOWS] + LIU_STATIC  # every model scored at every size
LIU_DIRECTIONS = liu2020.directions(config) if LIU_LANGS else []
LIU_TR_LANGS = sorted({l for d in LIU_DIRECTIONS for l in d})
# XNLI languages of the study beyond Table 1's (their dev and test sets: rule liu_taskdata_xnli)
LIU_XNLI_EXTRA = [l for l in LIU_LANGS if l not in TASK_LANGS]
LIU_MBERT = LIU["mbert"] if LIU_DIRECTIONS else None  # m-BERT's Section 4, beside our MLMs'
LIU_MBERT_RESULT = f"{R}/liu/translation/mbert.json"
# m-BERT's word retrieval: the "Google BERT" bars of Figures 1 and 3
LIU_MBERT_RETRIEVAL = f"{R}/liu/retrieval/mbert.json" if LIU_MBERT and LIU_MBERT["retrieval"] else None
LIU_CATEGORY = "5. Liu et al. 2020"


def liu_bpe_inputs(w):
    """Each language's sampled training text, and its whole validation and test splits."""
    d = {}
    for l in LIU_LANGS:
        d[f"{l}_train"] = f"{R}/liu/corpus/n{w.size}/{l}.train.txt"
        for split in ("valid", "test"):
            d[f"{l}_{split}"] = corpus(l, "wiki", split)
    return d


def liu_job(w):
    """One MLM of the study: every language of a data size, at one context window."""
    return PretrainJob.build(
        [f"{R}/liu/bin/n{w.size}"],
        ALL_SHARED,
        liu2020.model_section(config),
        liu2020.pretrain_section(config, w.window),
        LIU_LANGS,
        PSEED0,
    )


def liu_mlm_files(size, window):
    """An MLM's checkpoint and dictionary, and the BPE of its size."""
    return {
        "checkpoint": f"{R}/liu/pretrain/n{size}/{window}/checkpoint_best.pt",
        "dictionary": f"{R}/liu/bin/n{size}/dict.txt",
        "bpe": f"{R}/liu/bpe/n{size}/bpe.json",
    }


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


def liu_translation_inputs(w):
    """The MLM's files, the translated languages' training texts (and vocabularies when the convert
    rate's token sets are the training text's), XNLI-15way."""
    d = {**liu_mlm_files(w.size, w.window), "way15": downloaded("xnli_15way")}
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
        if LIU["translation"]["token_sets"] == "training":
            d[f"vocab_{l}"] = f"{R}/liu/bin/n{w.size}/dict.{l}.txt"
    d.update(segmenter_inputs(*LIU_TR_LANGS))  # 15-way sentences are segmented as the corpus was
    return d


def liu_translation_mbert_inputs(w):
    """m-BERT's files, the translated languages' sample lines (the smallest size), XNLI-15way."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]], "way15": downloaded("xnli_15way")}
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    return d


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
    hp = liu2020.xnli_hp(config)
    return FinetuneJob.build(config["finetune"], "xnli", SRC, SRC, hp, FSEED0, tokenize_params(*LIU_LANGS))


def liu_model_labels():
    labels = {"word2vec": "word2vec", "glove": "GloVe"}
    for window, w in zip(LIU_WINDOWS, LIU["windows"]):
        labels[f"mlm_{window}"] = "MLM" if w == "full" else f"MLM, {w}-token windows"
    if LIU_MBERT:
        labels["mbert"] = "m-BERT (bert-base-multilingual-cased)"
    return labels


def liu_translation_results():
    """The token translation results the report reads: each MLM's, then m-BERT's when configured."""
    ours = [f"{R}/liu/translation/n{n}/{w}.json" for n in LIU_SIZES for w in LIU_WINDOWS]
    return ours + ([LIU_MBERT_RESULT] if LIU_MBERT else [])


def liu_xnli_results():
    """The XNLI results the report reads: each MLM's and static model's, then m-BERT's when configured."""
    ours = [f"{R}/liu/xnli/n{n}/{m}.json" for n in LIU_SIZES for m in [*LIU_WINDOWS, *LIU_STATIC]]
    return ours + ([f"{R}/liu/xnli/mbert.json"] if LIU_MBERT else [])


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
        sentences=lambda w: int(w.size),
        lang=lambda w: w.lang,
        splitter=LIU["sample"]["splitter"],
        seed=LIU["sample"]["seed"],
    script:
        "../scripts/liu_sample.py"


use rule bpe_mono as liu_bpe with:
    input:
        unpack(liu_bpe_inputs),
    output:
        manifest=f"{R}/liu/bpe/n{{size}}/bpe.json",
        texts=[f"{R}/liu/bpe/n{{size}}/{l}.{s}.bpe" for l in LIU_LANGS for s in BPE_SPLITS],
    log:
        f"{LOGS}/liu/bpe/n{{size}}.log",
    benchmark:
        f"{BENCH}/liu/bpe/n{{size}}.tsv"
    wildcard_constraints:
        size=r"\d+",
    params:
        mode="joint",
        merges=LIU["bpe_merges"],
        languages=LIU_LANGS,


use rule binarize_mono as liu_binarize with:
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
    params:
        languages=LIU_LANGS,
        copies=[],


use rule pretrain_mono as liu_pretrain with:
    input:
        dictionary=f"{R}/liu/bin/n{{size}}/dict.txt",
    output:
        done=f"{R}/liu/pretrain/n{{size}}/{{window}}/done.json",
        best=f"{R}/liu/pretrain/n{{size}}/{{window}}/checkpoint_best.pt",
    log:
        f"{LOGS}/liu/pretrain/n{{size}}/{{window}}.log",
    benchmark:
        f"{BENCH}/liu/pretrain/n{{size}}/{{window}}.tsv"
    wildcard_constraints:
        size=r"\d+",
        window="|".join(LIU_WINDOWS),
    params:
        **pretrain_params(liu_job),


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
            src=SRC,
            langs=LIU_RETRIEVED,
            meta={"model": "mbert", "size": None},
            sentences=LIU["retrieval"]["sentences"],
            max_words=LIU["retrieval"]["max_words"],
            max_seq_len=LIU["retrieval"]["max_seq_len"],
            batch_size=LIU["retrieval"]["batch_size"],


rule liu_report:
    input:
        [f"{R}/liu/retrieval/{m}/n{n}.json" for n in LIU_SIZES for m in LIU_MODELS]
        + ([LIU_MBERT_RETRIEVAL] if LIU_MBERT_RETRIEVAL else []),
    output:
        png=report(f"{R}/report/liu2020/retrieval.png", category=LIU_CATEGORY, caption=caption("liu2020_retrieval.rst")),
        pdf=f"{R}/report/liu2020/retrieval.pdf",
        csv=f"{R}/report/liu2020/retrieval.csv",
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
        layers=liu2020.translation_layers(config),
        alphas=LIU["translation"]["alphas"],
        rows=LIU["translation"]["rows"],
        sentences=LIU["translation"]["sentences"],
        token_sets=LIU["translation"]["token_sets"],
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
            token_sets=LIU["translation"]["token_sets"],
            max_seq_len=LIU["translation"]["max_seq_len"],
            batch_size=LIU["translation"]["batch_size"],
        script:
            "../scripts/liu_translation_mbert.py"


rule liu_translation_report:
    input:
        liu_translation_results(),
    output:
        table_md=f"{R}/report/liu2020/table2.md",
        table_csv=report(f"{R}/report/liu2020/table2.csv", category=LIU_CATEGORY, caption=caption("liu2020_table2.rst")),
        fig_png=report(
            f"{R}/report/liu2020/figure7_8.png", category=LIU_CATEGORY, caption=caption("liu2020_figure7_8.rst")
        ),
        fig_pdf=f"{R}/report/liu2020/figure7_8.pdf",
    log:
        f"{LOGS}/report/liu2020_translation.log",
    conda:
        "../../envs/report.yaml"
    threads: threads_of("report")
    resources:
        **res("report"),
    params:
        labels=liu_model_labels(),
        layers=liu2020.model_section(config)["layers"],
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
        job=liu_xnli_job().tracked(),
        languages=LIU_LANGS,
        freeze=liu2020.xnli_freeze(config) if LIU_LANGS else 0,
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
            job=liu_xnli_job().tracked(),
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
        table_md=f"{R}/report/liu2020/table4.md",
        table_csv=report(f"{R}/report/liu2020/table4.csv", category=LIU_CATEGORY, caption=caption("liu2020_table4.rst")),
        fig_png=report(f"{R}/report/liu2020/xnli.png", category=LIU_CATEGORY, caption=caption("liu2020_xnli.rst")),
        fig_pdf=f"{R}/report/liu2020/xnli.pdf",
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


def liu_targets():
    """What target `liu2020` builds (nothing when liu2020.languages is empty)."""
    if not LIU_LANGS:
        return []
    out = list(rules.liu_report.output)
    if LIU_DIRECTIONS:
        out += rules.liu_translation_report.output
    return out + list(rules.liu_xnli_report.output)
