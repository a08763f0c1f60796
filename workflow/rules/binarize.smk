# fairseq binarisation: one shared dictionary per (setting, pair), per-language data dirs; the
# code-switched copies of the training text (v1, ...) in sub-directories with the same dictionary.


def switched_copies(setting_name):
    """Code-switched copies of the training text beyond the first (none without code-switching)."""
    return list(range(1, CS_VARIANTS)) if setting(setting_name)["codeswitch"] else []


rule binarize:
    input:
        manifest=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/bpe.json",
        # the dictionary counts every switched copy
        copies=lambda wc: [f"{R}/bpe/{wc.setting}/{wc.src}-{wc.tgt}/{l}.train.v{k}.bpe"
                           for k in switched_copies(wc.setting) for l in (wc.src, wc.tgt)],
    output:
        shared_dict=f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.txt",
        lang_dicts=[f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.{l}.txt" for l in ("{src}", "{tgt}")],
        data=[f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/{l}/{s}.{x}" for l in ("{src}", "{tgt}") for s in BPE_SPLITS for x in ("bin", "idx")],
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    log:
        f"{LOGS}/binarize/{{setting}}/{{src}}-{{tgt}}.log",
    params:
        languages=lambda wc: [wc.src, wc.tgt],
        variants=lambda wc: 1 + len(switched_copies(wc.setting)),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    script:
        "../scripts/binarize.py"


rule binarize_variant:
    input:
        shared_dict=f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.txt",
        texts=lambda wc: [f"{R}/bpe/{wc.setting}/{wc.src}-{wc.tgt}/{l}.train.v{wc.variant}.bpe" for l in (wc.src, wc.tgt)],
    output:
        [f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/v{{variant}}/{l}/train.{x}" for l in ("{src}", "{tgt}") for x in ("bin", "idx")],
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
        variant=r"[1-9]\d*",
    log:
        f"{LOGS}/binarize/{{setting}}/{{src}}-{{tgt}}.v{{variant}}.log",
    params:
        languages=lambda wc: [wc.src, wc.tgt],
        variant=lambda wc: int(wc.variant),
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    script:
        "../scripts/binarize_variant.py"


rule binarize_mono:
    input:
        manifest=f"{R}/bpe/mono/{{lang}}/bpe.json",
    output:
        shared_dict=f"{R}/bin/mono/{{lang}}/dict.txt",
        lang_dict=f"{R}/bin/mono/{{lang}}/dict.{{lang}}.txt",
        data=[f"{R}/bin/mono/{{lang}}/{{lang}}/{s}.{x}" for s in BPE_SPLITS for x in ("bin", "idx")],
    log:
        f"{LOGS}/binarize/mono/{{lang}}.log",
    params:
        languages=lambda wc: [wc.lang],
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    script:
        "../scripts/binarize.py"


if xcfg.prime(SRC) in xcfg.analysis_targets(config):

    rule binarize_prime_pair:
        """English data under two language ids (en, en_prime): Figure 7's bilingual en-en' model."""
        input:
            mono_dict=f"{R}/bin/mono/{SRC}/dict.txt",
            data=[f"{R}/bin/mono/{SRC}/{SRC}/{s}.{x}" for s in BPE_SPLITS for x in ("bin", "idx")],
        output:
            shared_dict=f"{R}/bin/mono/{SRC}-{xcfg.prime(SRC)}/dict.txt",
            lang_dicts=[f"{R}/bin/mono/{SRC}-{xcfg.prime(SRC)}/dict.{l}.txt" for l in (SRC, xcfg.prime(SRC))],
        log:
            f"{LOGS}/binarize/mono/{SRC}-{xcfg.prime(SRC)}.log",
        params:
            lang=SRC,
            alias=xcfg.prime(SRC),
        conda:
            "../../envs/fairseq.yaml"
        threads: 1
        resources:
            **res("binarize"),
        script:
            "../scripts/binarize_alias.py"
