# Bilingual dictionaries (both directions from one source) and code-switched training text for
# the Extra-anchors setting: codeswitch.variants independently switched copies (v0, v1, ...),
# one job each; pretraining trains epoch k on copy k mod variants.


def dict_inputs(wc):
    if config["codeswitch"]["dictionary"] == "panlex":
        d = {"source": downloaded("panlex")}
    else:  # MUSE files are en -> target; the reverse direction is the same file read backwards
        d = {"source": downloaded(f"muse_{wc.src}_{wc.tgt}_train")}
    d.update(segmenter_inputs(wc.src, wc.tgt))  # entries are segmented like the corpus
    return d


rule bilingual_dict:
    input:
        unpack(dict_inputs),
    output:
        fwd=f"{R}/dict/{{src}}-{{tgt}}.tsv",
        rev=f"{R}/dict/{{tgt}}-{{src}}.tsv",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
    log:
        f"{LOGS}/dict/{{src}}-{{tgt}}.log",
    params:
        kind=config["codeswitch"]["dictionary"],
        src=lambda wc: wc.src,
        tgt=lambda wc: wc.tgt,
        uids={lang: c["panlex"] for lang, c in config["languages"].items() if c.get("panlex")},
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("bpe"),
    script:
        "../scripts/codeswitch_dict.py"


def codeswitch_inputs(wc):
    d = {}
    for lang, other in ((wc.src, wc.tgt), (wc.tgt, wc.src)):
        d[f"{lang}_train"] = f"{R}/corpus/{lang}/wiki.train.txt"
        d[f"{lang}_dict"] = f"{R}/dict/{lang}-{other}.tsv"
    return d


rule codeswitch:
    input:
        unpack(codeswitch_inputs),
    output:
        report=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/report.json",
        src_text=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/{{src}}.train.txt",
        tgt_text=f"{R}/codeswitch/{{src}}-{{tgt}}/v{{variant}}/{{tgt}}.train.txt",
    wildcard_constraints:
        src=SRC,
        tgt="|".join(DATA_TARGETS),
        variant=r"\d+",
    log:
        f"{LOGS}/codeswitch/{{src}}-{{tgt}}.v{{variant}}.log",
    params:
        languages=lambda wc: [wc.src, wc.tgt],
        variant=lambda wc: int(wc.variant),
        seed=config["codeswitch"]["seed"],
        replace_prob=config["codeswitch"]["replace_prob"],
        max_fraction=config["codeswitch"]["max_fraction"],
        batch_words=config["codeswitch"]["batch_words"],
        max_phrase_words=config["codeswitch"].get("max_phrase_words", 4),
        lowercase_fallback=config["codeswitch"].get("lowercase_fallback", True),
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("bpe"),
    script:
        "../scripts/codeswitch.py"


