# Corpus preprocessing: downloads -> R/corpus/<lang>/<domain>.{train,valid,test}.txt.
# Raw text -> a fixed number of round-robin shards (preprocess.shards, so the DAG is static) ->
# one tokenisation job per shard -> merge, optional length filter and dedup, seeded split.

from xling.preprocess.plan import n_shards
from xling.preprocess.split import SplitSettings


def tok_shards(wc):
    return [f"{R}/corpus/{wc.lang}/shards/{wc.domain}.{i}.tok.txt" for i in range(n_shards(config, wc.lang))]


def split_params():
    """xling.preprocess.split.SplitSettings of the corpus split."""
    return asdict(SplitSettings.from_config(config["preprocess"]))


def corpus(lang, domain, split):
    """A language's preprocessed text: R/corpus/<lang>/<domain>.<split>.txt (what later stages read)."""
    return f"{R}/corpus/{lang}/{domain}.{split}.txt"


# languages whose main corpus is TEI files (preprocess.corpus_files: ELTeC's novels), not Wikipedia
TEI_FILES = config["preprocess"]["corpus_files"]
WIKI_LANGS = [lang for lang in config["languages"] if lang not in TEI_FILES]


rule wiki_extract:
    input:
        dump=lambda wc: downloaded(f"wiki_{wc.lang}"),
    output:
        txt=temp(f"{R}/corpus/{{lang}}/raw/wiki.txt"),
    log:
        f"{LOGS}/corpus/{{lang}}/wiki_extract.log",
    wildcard_constraints:
        lang="|".join(WIKI_LANGS) or "NONE",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("preprocess")
    resources:
        **res("preprocess"),
    params:
        drop=config["preprocess"]["wiki_drop"],
    script:
        "../scripts/preprocess_wiki_extract.py"


rule tei_extract:
    """A language's novels (TEI: the body's paragraphs, verse lines and headings, notes and page
    breaks taken out) cut into one sentence a line: its main corpus in place of Wikipedia's."""
    input:
        tei=lambda wc: [downloaded(rid) for rid in TEI_FILES[wc.lang]],
    output:
        txt=temp(f"{R}/corpus/{{lang}}/raw/wiki.txt"),
    log:
        f"{LOGS}/corpus/{{lang}}/tei_extract.log",
    wildcard_constraints:
        lang="|".join(TEI_FILES) or "NONE",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("preprocess"),
    params:
        lang=lambda wc: wc.lang,
        splitter=config["preprocess"]["sentence_splitter"],
    script:
        "../scripts/preprocess_tei_extract.py"


rule cc_extract:
    input:
        cc=lambda wc: downloaded(f"cc_{wc.lang}"),
    output:
        txt=temp(f"{R}/corpus/{{lang}}/raw/cc.txt"),
    log:
        f"{LOGS}/corpus/{{lang}}/cc_extract.log",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("preprocess"),
    script:
        "../scripts/preprocess_cc_extract.py"


# One split rule per language, so each language may have its own shard count (outputs are static).
for _lang in config["languages"]:

    rule:
        name:
            f"split_shards_{_lang}"
        input:
            txt=f"{R}/corpus/{_lang}/raw/{{domain}}.txt",
        output:
            shards=temp([f"{R}/corpus/{_lang}/shards/{{domain}}.{i}.raw.txt" for i in range(n_shards(config, _lang))]),
        log:
            f"{LOGS}/corpus/{_lang}/split_shards.{{domain}}.log",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("preprocess"),
        script:
            "../scripts/preprocess_split_shards.py"


rule tokenize_shard:
    input:
        unpack(lambda wc: segmenter_inputs(wc.lang)),
        shard=f"{R}/corpus/{{lang}}/shards/{{domain}}.{{shard}}.raw.txt",
    output:
        tok=temp(f"{R}/corpus/{{lang}}/shards/{{domain}}.{{shard}}.tok.txt"),
    log:
        f"{LOGS}/corpus/{{lang}}/tokenize.{{domain}}.{{shard}}.log",
    benchmark:
        f"{BENCH}/corpus/{{lang}}/tokenize.{{domain}}.{{shard}}.tsv"
    wildcard_constraints:
        shard=r"\d+",
    conda:
        "../../envs/corpus.yaml"
    threads: threads_of("preprocess")
    resources:
        **res("preprocess"),
    params:
        tokenize=lambda wc: tokenize_params(wc.lang)[wc.lang],
    script:
        "../scripts/preprocess_tokenize_shard.py"


rule merge_split:
    input:
        shards=tok_shards,
        # Wiki-CC: a CC train split holds as many tokens as the same language's Wikipedia one
        match_train=lambda wc: f"{R}/corpus/{wc.lang}/wiki.train.txt" if wc.domain == "cc" else [],
    output:
        train=f"{R}/corpus/{{lang}}/{{domain}}.train.txt",
        valid=f"{R}/corpus/{{lang}}/{{domain}}.valid.txt",
        test=f"{R}/corpus/{{lang}}/{{domain}}.test.txt",
    log:
        f"{LOGS}/corpus/{{lang}}/merge_split.{{domain}}.log",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("preprocess"),
    params:
        split=split_params(),
    script:
        "../scripts/preprocess_merge_split.py"
