# fairseq binarisation: one shared dictionary per (setting, pair), per-language data dirs; the
# code-switched copies of the training text (v1, ...) in sub-directories with the same dictionary.


def binarize_inputs(wc):
    bpe_dir = f"{R}/bpe/{wc.setting}/{wc.src}-{wc.tgt}"
    d = bpe_texts(bpe_dir, (wc.src, wc.tgt))
    for k in switched_copies(wc.setting):  # the dictionary counts every switched copy
        for l in (wc.src, wc.tgt):
            d[f"{l}_train_v{k}"] = f"{bpe_dir}/{l}.train.v{k}.bpe"
    return d


def bin_dir(setting_name, pair):
    """The binarised data of a bilingual model, with its dict.txt: the pair's directory (Table 1
    rows with equal BPE share it); en-en_prime reads the monolingual English data."""
    if xcfg.is_prime(pair):
        return f"{R}/bin/mono/{pair}"
    return f"{R}/bin/{canonical(setting_name)}/{pair}"


rule binarize:
    input:
        unpack(binarize_inputs),
    output:
        shared_dict=f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.txt",
        lang_dicts=[f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.{l}.txt" for l in ("{src}", "{tgt}")],
        data=[
            f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/{l}/{s}.{x}"
            for l in ("{src}", "{tgt}")
            for s in BPE_SPLITS
            for x in ("bin", "idx")
        ],
    log:
        f"{LOGS}/binarize/{{setting}}/{{src}}-{{tgt}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    params:
        languages=lambda wc: [wc.src, wc.tgt],
        copies=lambda wc: switched_copies(wc.setting),
    script:
        "../scripts/binarize.py"


rule binarize_variant:
    input:
        shared_dict=f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.txt",
        src_text=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/{{src}}.train.v{{variant}}.bpe",
        tgt_text=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/{{tgt}}.train.v{{variant}}.bpe",
    output:
        [
            f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/v{{variant}}/{l}/train.{x}"
            for l in ("{src}", "{tgt}")
            for x in ("bin", "idx")
        ],
    log:
        f"{LOGS}/binarize/{{setting}}/{{src}}-{{tgt}}.v{{variant}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
        variant=r"[1-9]\d*",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    params:
        languages=lambda wc: [wc.src, wc.tgt],
    script:
        "../scripts/binarize_variant.py"


rule binarize_mono:
    input:
        unpack(lambda wc: bpe_texts(f"{R}/bpe/mono/{wc.lang}", [wc.lang])),
    output:
        shared_dict=f"{R}/bin/mono/{{lang}}/dict.txt",
        lang_dict=f"{R}/bin/mono/{{lang}}/dict.{{lang}}.txt",
        data=[f"{R}/bin/mono/{{lang}}/{{lang}}/{s}.{x}" for s in BPE_SPLITS for x in ("bin", "idx")],
    log:
        f"{LOGS}/binarize/mono/{{lang}}.log",
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    params:
        languages=lambda wc: [wc.lang],
        copies=[],
    script:
        "../scripts/binarize.py"


if xcfg.prime(SRC) in xcfg.analysis_targets(config):

    rule binarize_prime_pair:
        """English data under two language ids (en, en_prime): Figure 7's bilingual en-en' model."""
        input:
            mono_dict=f"{R}/bin/mono/{SRC}/dict.txt",
            lang_dict=f"{R}/bin/mono/{SRC}/dict.{SRC}.txt",
            data=[f"{R}/bin/mono/{SRC}/{SRC}/{s}.{x}" for s in BPE_SPLITS for x in ("bin", "idx")],
        output:
            shared_dict=f"{R}/bin/mono/{SRC}-{xcfg.prime(SRC)}/dict.txt",
            lang_dicts=[f"{R}/bin/mono/{SRC}-{xcfg.prime(SRC)}/dict.{l}.txt" for l in (SRC, xcfg.prime(SRC))],
        log:
            f"{LOGS}/binarize/mono/{SRC}-{xcfg.prime(SRC)}.log",
        conda:
            "../../envs/fairseq.yaml"
        threads: 1
        resources:
            **res_single("binarize"),
        params:
            lang=SRC,
            alias=xcfg.prime(SRC),
        script:
            "../scripts/binarize_alias.py"
