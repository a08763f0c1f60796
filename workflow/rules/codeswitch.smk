# Bilingual dictionaries (both directions from one source) and code-switched training text for
# the Extra-anchors setting: codeswitch.variants independently switched copies (v0, v1, ...),
# one job each; pretraining trains epoch k on copy k mod variants.

CS_VARIANTS = int(config["codeswitch"]["variants"])


def switched_copies(setting_name):
    """Code-switched copies of the training text beyond the first (none without code-switching)."""
    return list(range(1, CS_VARIANTS)) if setting(setting_name)["codeswitch"] else []


def dict_inputs(wc):
    if config["codeswitch"]["dictionary"] == "panlex":
        d = {"source": downloaded("panlex")}
    else:  # MUSE files are en -> target; the reverse direction is the same file read backwards
        d = {"source": downloaded(f"muse_{wc.src}_{wc.tgt}_train")}
    d.update(segmenter_inputs(wc.src, wc.tgt))  # entries are segmented like the corpus
    return d


def dictionary_file(lang, other):
    """The weighted dictionary a language's text is switched with: rule bilingual_dict's, or with
    codeswitch.dictionary freedict rule bilingual_dict_freedict's."""
    folder = f"{R}/dict/freedict" if config["codeswitch"]["dictionary"] == "freedict" else f"{R}/dict"
    return f"{folder}/{lang}-{other}.tsv"


def codeswitch_inputs(wc):
    d = {}
    for lang, other in ((wc.src, wc.tgt), (wc.tgt, wc.src)):
        d[f"{lang}_train"] = corpus(lang, "wiki", "train")
        d[f"{lang}_dict"] = dictionary_file(lang, other)
    return d


def freedict_inputs(wc):
    """FreeDict's dictionary of the pair, and its reverse direction where FreeDict has one."""
    freedict = config["codeswitch"]["freedict"]
    d = {"source": downloaded(freedict[f"{wc.src}-{wc.tgt}"]), **segmenter_inputs(wc.src, wc.tgt)}
    if f"{wc.tgt}-{wc.src}" in freedict:
        d["reverse_source"] = downloaded(freedict[f"{wc.tgt}-{wc.src}"])
    return d


def codeswitch_params():
    cs = config["codeswitch"]
    keys = ("seed", "replace_prob", "max_fraction", "batch_words", "max_phrase_words", "lowercase_fallback")
    return {k: cs[k] for k in keys}


rule bilingual_dict:
    input:
        unpack(dict_inputs),
    output:
        fwd=f"{R}/dict/{{src}}-{{tgt}}.tsv",
        rev=f"{R}/dict/{{tgt}}-{{src}}.tsv",
    log:
        f"{LOGS}/dict/{{src}}-{{tgt}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("bpe"),
    params:
        kind=config["codeswitch"]["dictionary"],
        src=lambda wc: wc.src,
        tgt=lambda wc: wc.tgt,
        uids={lang: c["panlex"] for lang, c in config["languages"].items() if c.get("panlex")},
        # entries are tokenised exactly as the corpus
        tokenize=lambda wc: tokenize_params(wc.src, wc.tgt),
    script:
        "../scripts/codeswitch_dict.py"


rule bilingual_dict_freedict:
    """R/dict/freedict/<src>-<tgt>.tsv and its reverse from FreeDict's two directions, merged
    (codeswitch.dictionary: freedict)."""
    input:
        unpack(freedict_inputs),
    output:
        fwd=f"{R}/dict/freedict/{{src}}-{{tgt}}.tsv",
        rev=f"{R}/dict/freedict/{{tgt}}-{{src}}.tsv",
    log:
        f"{LOGS}/dict/freedict/{{src}}-{{tgt}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("bpe"),
    params:
        src=lambda wc: wc.src,
        tgt=lambda wc: wc.tgt,
        tokenize=lambda wc: tokenize_params(wc.src, wc.tgt),
    script:
        "../scripts/codeswitch_dict_freedict.py"


rule codeswitch:
    input:
        unpack(codeswitch_inputs),
    output:
        report=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/report.json",
        src_text=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/{{src}}.train.txt",
        tgt_text=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/{{tgt}}.train.txt",
    log:
        f"{LOGS}/codeswitch/{{src}}-{{tgt}}.v{{variant}}.log",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
        variant=r"\d+",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("bpe"),
    params:
        languages=lambda wc: [wc.src, wc.tgt],
        variant=lambda wc: int(wc.variant),
        codeswitch=codeswitch_params(),
    script:
        "../scripts/codeswitch.py"
