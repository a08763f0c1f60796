# Liu et al. 2020, "A Study of Cross-Lingual Ability and Language-specific Information in
# Multilingual BERT", on this pipeline's stages: N sentences of each language's training split
# drawn at random (liu2020.sizes, liu2020.sample), one joint BPE, binarisation and MLM per size and
# context window (the stage rules bpe_mono, binarize_mono and pretrain_mono, reused), word2vec and
# GloVe on the same BPE text. Its experiments, on these models and m-BERT, have a file each:
# word retrieval (liu2020_retrieval.smk, Section 3), token translation by the mean difference shift
# (liu2020_translation.smk, Section 4.2) and XNLI with the shift (liu2020_xnli.smk, Section 4.3).
# Outputs: R/liu/..., R/report/liu2020/. Target: `snakemake liu2020`.

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


def liu_model_labels():
    labels = {"word2vec": "word2vec", "glove": "GloVe"}
    for window, w in zip(LIU_WINDOWS, LIU["windows"]):
        labels[f"mlm_{window}"] = "MLM" if w == "full" else f"MLM, {w}-token windows"
    if LIU_MBERT:
        labels["mbert"] = "m-BERT (bert-base-multilingual-cased)"
    return labels


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


def liu_targets():
    """What target `liu2020` builds (nothing when liu2020.languages is empty)."""
    if not LIU_LANGS:
        return []
    out = list(rules.liu_report.output)
    if LIU_DIRECTIONS:
        out += rules.liu_translation_report.output
    return out + list(rules.liu_xnli_report.output)
