# BPE (subword-nmt) in the three modes of Table 1: joint, per_language, per_language_prefixed.
# Settings whose BPE data are identical (Default anchors and the Sep* rows) are built once, under
# the first such setting in config order (`canonical`).

from xling.bpe import sample_params


def bpe_inputs(wc):
    st = setting(wc.setting)
    domains = dict(zip((wc.src, wc.tgt), st["domain"].split("-")))  # wiki-cc: en wiki, other cc
    d = {}
    for lang in (wc.src, wc.tgt):
        for split in BPE_SPLITS:
            d[f"{lang}_{split}"] = corpus(lang, domains[lang], split)
        if st["codeswitch"]:  # codes are learnt on the first switched copy
            d[f"{lang}_train"] = f"{R}/codeswitch/{wc.src}-{wc.tgt}/v0/{lang}.train.txt"
    return d


def mono_corpus(wc):
    return {f"{wc.lang}_{s}": corpus(wc.lang, "wiki", s) for s in BPE_SPLITS}


def bpe_texts(bpe_dir, langs):
    """The BPE text files of a BPE directory, named ``<lang>_<split>`` as the binarisers read them."""
    return {f"{l}_{s}": f"{bpe_dir}/{l}.{s}.bpe" for l in langs for s in BPE_SPLITS}


def bpe_manifest(setting_name, pair):
    """The BPE (codes and vocabulary, xling.bpe) a bilingual model's text was segmented with."""
    return f"{R}/bpe/{canonical(setting_name)}/{pair}/bpe.json"


rule bpe:
    input:
        unpack(bpe_inputs),
    output:
        manifest=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/bpe.json",
        anchors=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/anchors.json",
        texts=[f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/{l}.{s}.bpe" for l in ("{src}", "{tgt}") for s in BPE_SPLITS],
    log:
        f"{LOGS}/bpe/{{setting}}/{{src}}-{{tgt}}.log",
    benchmark:
        f"{BENCH}/bpe/{{setting}}/{{src}}-{{tgt}}.tsv"
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("bpe")
    resources:
        **res("bpe"),
    params:
        mode=lambda wc: setting(wc.setting)["bpe"],
        merges=lambda wc: setting(wc.setting)["merges"],
        languages=lambda wc: [wc.src, wc.tgt],
        # joint codes: learnt on an equal sample of each language (XLM's `shuf -r -n`), xling.bpe.JointSample
        sample=lambda wc: sample_params(config["bpe"], setting(wc.setting)["bpe"]),
    script:
        "../scripts/bpe_build.py"


rule bpe_variant:
    """Another code-switched copy of a language's training text, segmented with the codes learnt
    on the first."""
    input:
        manifest=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/bpe.json",
        text=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/{{lang}}.train.txt",
    output:
        f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/{{lang}}.train.v{{variant}}.bpe",
    log:
        f"{LOGS}/bpe/{{setting}}/{{src}}-{{tgt}}.{{lang}}.v{{variant}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
        variant=r"[1-9]\d*",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("bpe")
    resources:
        **res("bpe"),
    params:
        lang=lambda wc: wc.lang,
    script:
        "../scripts/bpe_variant.py"


rule bpe_mono:
    input:
        unpack(mono_corpus),
    output:
        manifest=f"{R}/bpe/mono/{{lang}}/bpe.json",
        texts=[f"{R}/bpe/mono/{{lang}}/{{lang}}.{s}.bpe" for s in BPE_SPLITS],
    log:
        f"{LOGS}/bpe/mono/{{lang}}.log",
    benchmark:
        f"{BENCH}/bpe/mono/{{lang}}.tsv"
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("bpe")
    resources:
        **res("bpe"),
    params:
        mode="joint",
        merges=config["monolingual"]["bpe_merges"],
        languages=lambda wc: [wc.lang],
    script:
        "../scripts/bpe_build.py"
