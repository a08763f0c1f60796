# BPE (subword-nmt) in the three modes of Table 1: joint, per_language, per_language_prefixed.
# Settings whose BPE data are identical (Default anchors and the Sep* rows) are built once, under
# the first such setting in config order (`canonical`).


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
        BENCH_FILES["bpe"]
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
        BENCH_FILES["bpe_mono"]
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


rule anchors_table:
    input:
        # settings with the same BPE (the Sep* rows and Default anchors) share one data directory
        [f"{R}/bpe/{canonical(s)}/{p}/anchors.json" for p in PAIRS for s in SETTINGS],
    output:
        **reported({"anchors_md": f"{R}/report/anchors.md"}),
    log:
        f"{LOGS}/report/anchors.log",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("report"),
    params:
        entries=[[p, setting(s)["label"]] for p in PAIRS for s in SETTINGS],
    script:
        "../scripts/bpe_anchors_table.py"
