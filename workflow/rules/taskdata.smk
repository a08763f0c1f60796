# Task data: the downloaded raw files -> normalised task files (docs/ARCHITECTURE.md).
# NER's English side depends on the pair: WikiAnn in ner/en, CoNLL-2003 (for Levow targets) in
# ner/en_conll2003 (xling.taskdata.layout.task_dirs tells fine-tuning which to use). NER targets
# whose licensed corpus is missing are left out, with instructions (NER_UNAVAILABLE). UD treebanks
# come from the archive (downloads.ud) or from single-file downloads (taskdata.ud_files: a
# language gets the splits its treebank lists); extra test sets (finetune.parsing.extra_tests) are
# task files <lang>/<name>.conllu (xling.config.parsing).

from snakemake.logging import logger

from xling.config import parsing as ud_cfg
from xling.download.licensed import unavailable_ner_targets
from xling.taskdata.layout import ner_dataset, task_dirs

if BUNDLE:  # the cells the bundle's run left out, whatever this machine holds
    NER_UNAVAILABLE = BUNDLE.manifest["ner_unavailable"]
else:
    NER_UNAVAILABLE = unavailable_ner_targets(config, generated_under=f"{R}/testbed" if USE_TESTBED else None)
for _lang, _why in NER_UNAVAILABLE.items():
    logger.warning(f"NER {SRC}-{_lang} is left out of this run: {_why}")

TASK_LANGS = sorted({SRC, *TARGETS})
TD_SPLITS = ("train", "dev", "test")
NER_TARGETS = [l for l in TARGETS if l not in NER_UNAVAILABLE]
NER_WIKIANN = sorted({SRC} | {l for l in NER_TARGETS if ner_dataset(config, l) == "wikiann"})
NER_LEVOW = sorted(l for l in NER_TARGETS if ner_dataset(config, l) == "levow")
TASK_EXT = {"xnli": "tsv", "ner": "bio", "parsing": "conllu"}
UD_ARCHIVE_LANGS = ud_cfg.archive_languages(config)
UD_FILE_LANGS = ud_cfg.file_languages(config)
UD_EXTRA = ud_cfg.extra_tests(config)  # name -> {lang: treebank}


def task_file(task, folder, split):
    """A normalised task file: R/tasks/<task>/<language folder>/<split>.<ext>."""
    return f"{R}/tasks/{task}/{folder}/{split}.{TASK_EXT[task]}"


def licensed_files(cid):
    """The licensed corpus' files as inputs (Snakemake then checks them); in the demo the testbed
    directory stands in for them."""
    e = config["licensed"][cid]
    return [TESTBED_MIRROR] if USE_TESTBED else [f"{e['path']}/{f}" for f in e["files"]]


def taskdata_targets():
    out = []
    if "xnli" in TASKS:
        out += [task_file("xnli", l, s) for l in TASK_LANGS for s in ("dev", "test")]
        out.append(task_file("xnli", SRC, "train"))
    if "ner" in TASKS:
        out += [task_file("ner", l, s) for l in NER_WIKIANN + NER_LEVOW for s in TD_SPLITS]
        if NER_LEVOW:
            out += [task_file("ner", f"{SRC}_conll2003", s) for s in TD_SPLITS]
    if "parsing" in TASKS:
        out += [task_file("parsing", l, s) for l in TASK_LANGS for s in ud_cfg.task_splits(config, l)]
        out += [task_file("parsing", l, name) for name, langs in UD_EXTRA.items() for l in langs]
    return out


def ud_source(treebank, ud_split):
    """The input a UD split is read from: its single downloaded file, or the extracted archive."""
    if ud_cfg.from_files(config, treebank):
        return {"conllu": downloaded(ud_cfg.split_download(config, treebank, ud_split))}
    return {"ud": downloaded(ud_cfg.ARCHIVE)}


rule taskdata_xnli:
    input:
        xnli=downloaded("xnli"),
        multinli=downloaded("multinli"),
    output:
        [f"{R}/tasks/xnli/{l}/{s}.tsv" for l in TASK_LANGS for s in ("dev", "test")],
        train=f"{R}/tasks/xnli/{SRC}/train.tsv",
    log:
        f"{LOGS}/tasks/xnli.log",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("download"),
    params:
        languages=TASK_LANGS,
        source=SRC,
    script:
        "../scripts/taskdata_xnli.py"


rule taskdata_ner_wikiann:
    input:
        panx=downloaded("wikiann"),
    output:
        [f"{R}/tasks/ner/{{lang}}/{s}.bio" for s in TD_SPLITS],
    log:
        f"{LOGS}/tasks/ner_{{lang}}.log",
    wildcard_constraints:
        lang="|".join(NER_WIKIANN),
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("download"),
    params:
        lang=lambda wc: wc.lang,
    script:
        "../scripts/taskdata_ner_wikiann.py"


if NER_LEVOW:

    rule taskdata_ner_conll2003:
        input:
            licensed_files("conll2003_en"),
        output:
            [f"{R}/tasks/ner/{SRC}_conll2003/{s}.bio" for s in TD_SPLITS],
        log:
            f"{LOGS}/tasks/ner_{SRC}_conll2003.log",
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            conll_dir=config["licensed"]["conll2003_en"]["path"],
        script:
            "../scripts/taskdata_ner_conll2003.py"

    rule taskdata_ner_levow:
        input:
            unpack(lambda wc: segmenter_inputs(wc.lang)),
            licensed=licensed_files("levow_zh"),
        output:
            [f"{R}/tasks/ner/{{lang}}/{s}.bio" for s in TD_SPLITS],
        log:
            f"{LOGS}/tasks/ner_{{lang}}.log",
        wildcard_constraints:
            lang="|".join(NER_LEVOW),
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            levow_dir=config["licensed"]["levow_zh"]["path"],
            # the corpus preprocessing's segmenter, so task words are pretraining words
            tokenize=lambda wc: tokenize_params(wc.lang)[wc.lang],
            dev_fraction=config["taskdata"]["levow_dev_fraction"],
        script:
            "../scripts/taskdata_ner_levow.py"


# At the top level whatever the config (its code, as Snakemake records it, is that of the runs
# before single-file treebanks existed, so their parsing task files stay finished); with no
# language from the archive its wildcard matches nothing
rule taskdata_parsing:
    input:
        ud=downloaded("ud"),
    output:
        [f"{R}/tasks/parsing/{{lang}}/{s}.conllu" for s in TD_SPLITS],
    log:
        f"{LOGS}/tasks/parsing_{{lang}}.log",
    wildcard_constraints:
        lang="|".join(UD_ARCHIVE_LANGS) or "(?!)",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res_single("download"),
    params:
        treebank=lambda wc: config["finetune"]["parsing"]["treebanks"][wc.lang],
        splits=config["taskdata"]["ud_splits"],
    script:
        "../scripts/taskdata_parsing.py"


if UD_FILE_LANGS:

    rule taskdata_parsing_file:
        input:
            unpack(lambda wc: ud_source(ud_cfg.treebank(config, wc.lang), config["taskdata"]["ud_splits"][wc.split])),
        output:
            f"{R}/tasks/parsing/{{lang}}/{{split}}.conllu",
        log:
            f"{LOGS}/tasks/parsing_{{lang}}_{{split}}.log",
        wildcard_constraints:
            lang="|".join(UD_FILE_LANGS),
            split="|".join(TD_SPLITS),
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            treebank=lambda wc: ud_cfg.treebank(config, wc.lang),
            ud_split=lambda wc: config["taskdata"]["ud_splits"][wc.split],
        script:
            "../scripts/taskdata_parsing_split.py"


if UD_EXTRA:

    rule taskdata_parsing_extra:
        input:
            unpack(lambda wc: ud_source(UD_EXTRA[wc.test][wc.lang], ud_cfg.EXTRA_SPLIT)),
        output:
            f"{R}/tasks/parsing/{{lang}}/{{test}}.conllu",
        log:
            f"{LOGS}/tasks/parsing_{{lang}}_{{test}}.log",
        wildcard_constraints:
            lang="|".join(sorted({l for langs in UD_EXTRA.values() for l in langs})),
            test="|".join(UD_EXTRA),
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res_single("download"),
        params:
            treebank=lambda wc: UD_EXTRA[wc.test][wc.lang],
            ud_split=ud_cfg.EXTRA_SPLIT,
        script:
            "../scripts/taskdata_parsing_split.py"
