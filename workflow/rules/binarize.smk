# fairseq binarisation: one shared dictionary per (setting, pair), per-language data dirs.

rule binarize:
    input:
        manifest=f"{R}/bpe/{{setting}}/{{src}}-{{tgt}}/bpe.json",
    output:
        shared_dict=f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.txt",
        lang_dicts=[f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/dict.{l}.txt" for l in ("{src}", "{tgt}")],
        data=[f"{R}/bin/{{setting}}/{{src}}-{{tgt}}/{l}/{s}.{x}" for l in ("{src}", "{tgt}") for s in BPE_SPLITS for x in ("bin", "idx")],
    wildcard_constraints:
        src=SRC,
        tgt="|".join(TARGETS),
    log:
        f"{LOGS}/binarize/{{setting}}/{{src}}-{{tgt}}.log",
    params:
        languages=lambda wc: [wc.src, wc.tgt],
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("binarize")
    resources:
        **res("binarize"),
    script:
        "../scripts/binarize.py"


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
