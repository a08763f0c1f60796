# Task data: the downloaded raw files -> normalised task files (docs/ARCHITECTURE.md).
# NER's English side depends on the pair: WikiAnn in ner/en, CoNLL-2003 (for Levow targets) in
# ner/en_conll2003 (xling.taskdata.layout.task_dirs tells fine-tuning which to use).

from snakemake.logging import logger

from xling.download.licensed import unavailable_ner_targets
from xling.taskdata.layout import ner_dataset

# Planning time: NER cells whose licensed corpus is not in place are left out (everything else
# runs; Table 1 shows them as needing licensed data), with instructions. The demo's testbed
# writes its stand-ins during the run, so they are not checked on disk.
NER_UNAVAILABLE = unavailable_ner_targets(config, generated_under=f"{R}/testbed" if USE_TESTBED else None)
for _lang, _why in NER_UNAVAILABLE.items():
    logger.warning(f"NER {SRC}-{_lang} is left out of this run: {_why}")

TASK_LANGS = sorted({SRC, *TARGETS})
TD_SPLITS = ("train", "dev", "test")
NER_TARGETS = [l for l in TARGETS if l not in NER_UNAVAILABLE]
NER_WIKIANN = sorted({SRC} | {l for l in NER_TARGETS if ner_dataset(config, l) == "wikiann"})
NER_LEVOW = sorted(l for l in NER_TARGETS if ner_dataset(config, l) == "levow")
TESTBED_INPUT = [rules.testbed.output[0]] if USE_TESTBED else []
# Optional `taskdata:` config section; these defaults are the paper's.
TD = {"ud_splits": {"train": "train", "dev": "dev", "test": "test"}, "levow_dev_fraction": 0.1,
      **config.get("taskdata", {})}


def licensed_files(cid):
    """The licensed corpus' files as inputs (Snakemake then checks them); in the demo the testbed
    directory stands in for them."""
    e = config["licensed"][cid]
    return TESTBED_INPUT if USE_TESTBED else [f"{e['path']}/{f}" for f in e["files"]]


def taskdata_targets():
    out = []
    if "xnli" in TASKS:
        out += [f"{R}/tasks/xnli/{l}/{s}.tsv" for l in TASK_LANGS for s in ("dev", "test")]
        out.append(f"{R}/tasks/xnli/{SRC}/train.tsv")
    if "ner" in TASKS:
        out += [f"{R}/tasks/ner/{l}/{s}.bio" for l in NER_WIKIANN + NER_LEVOW for s in TD_SPLITS]
        if NER_LEVOW:
            out += [f"{R}/tasks/ner/{SRC}_conll2003/{s}.bio" for s in TD_SPLITS]
    if "parsing" in TASKS:
        out += [f"{R}/tasks/parsing/{l}/{s}.conllu" for l in TASK_LANGS for s in TD_SPLITS]
    return out


rule taskdata_xnli:
    input:
        xnli=downloaded("xnli"),
        multinli=downloaded("multinli"),
    output:
        [f"{R}/tasks/xnli/{l}/{s}.tsv" for l in TASK_LANGS for s in ("dev", "test")],
        f"{R}/tasks/xnli/{SRC}/train.tsv",
    log:
        f"{LOGS}/tasks/xnli.log",
    params:
        task="xnli",
        languages=TASK_LANGS,
        source=SRC,
        out_root=f"{R}/tasks/xnli",
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("download"),
    script:
        "../scripts/taskdata.py"


rule taskdata_ner_wikiann:
    input:
        panx=downloaded("wikiann"),
    output:
        [f"{R}/tasks/ner/{{lang}}/{s}.bio" for s in TD_SPLITS],
    wildcard_constraints:
        lang="|".join(NER_WIKIANN),
    log:
        f"{LOGS}/tasks/ner_{{lang}}.log",
    params:
        task="ner_wikiann",
        lang=lambda wc: wc.lang,
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("download"),
    script:
        "../scripts/taskdata.py"


rule taskdata_ner_conll2003:
    input:
        licensed_files("conll2003_en"),
    output:
        [f"{R}/tasks/ner/{SRC}_conll2003/{s}.bio" for s in TD_SPLITS],
    log:
        f"{LOGS}/tasks/ner_{SRC}_conll2003.log",
    params:
        task="ner_conll2003",
        conll_dir=config["licensed"]["conll2003_en"]["path"],
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("download"),
    script:
        "../scripts/taskdata.py"


if NER_LEVOW:

    rule taskdata_ner_levow:
        input:
            unpack(lambda wc: segmenter_inputs(wc.lang)),
            licensed=licensed_files("levow_zh"),
        output:
            [f"{R}/tasks/ner/{{lang}}/{s}.bio" for s in TD_SPLITS],
        wildcard_constraints:
            lang="|".join(NER_LEVOW),
        log:
            f"{LOGS}/tasks/ner_{{lang}}.log",
        params:
            task="ner_levow",
            levow_dir=config["licensed"]["levow_zh"]["path"],
            # the corpus preprocessing's segmenter, so task words are pretraining words
            segmenter=lambda wc: config["languages"][wc.lang]["segmenter"],
            stanford_home=lambda wc, input: input.get("stanford"),
            stanford_model=config["preprocess"].get("stanford_model", "pku"),
            dev_fraction=TD["levow_dev_fraction"],
        conda:
            "../../envs/corpus.yaml"
        threads: 1
        resources:
            **res("download"),
        script:
            "../scripts/taskdata.py"


rule taskdata_parsing:
    input:
        ud=downloaded("ud"),
    output:
        [f"{R}/tasks/parsing/{{lang}}/{s}.conllu" for s in TD_SPLITS],
    wildcard_constraints:
        lang="|".join(config["finetune"]["parsing"]["treebanks"]),
    log:
        f"{LOGS}/tasks/parsing_{{lang}}.log",
    params:
        task="parsing",
        treebank=lambda wc: config["finetune"]["parsing"]["treebanks"][wc.lang],
        splits=TD["ud_splits"],
    conda:
        "../../envs/corpus.yaml"
    threads: 1
    resources:
        **res("download"),
    script:
        "../scripts/taskdata.py"
