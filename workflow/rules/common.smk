# Shared by every stage: config validation, paths, resources, the parameter bundles jobs receive,
# input functions and the target lists of `all`. Rule files hold rules only, so they can be read
# and included in any order after this one. Every value a job uses reaches it as a `params:` or
# `input:` of its rule (a script never reads the config), so a changed setting reruns exactly the
# jobs that use it.

import sys
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlparse

# The one place that puts the package in src/ on sys.path, for this process as for every script.
sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "scripts"))
import _setup  # noqa: E402,F401

from snakemake.logging import logger  # noqa: E402

from xling import config as xcfg  # noqa: E402
from xling.bpe import canonical_setting  # noqa: E402
from xling.cluster.budget import check_pretrain_runtime, planned_rate, pretrain_device, pretrain_estimates  # noqa: E402
from xling.cluster.resources import rule_resources, rule_threads  # noqa: E402
from xling.download.licensed import unavailable_ner_targets  # noqa: E402
from xling.errors import ConfigError  # noqa: E402
from xling.preprocess.plan import n_shards, uses_stanford  # noqa: E402
from xling.preprocess.split import SplitSettings  # noqa: E402
from xling.preprocess.tokenize import TokenizeSettings  # noqa: E402
from xling.taskdata.layout import ner_dataset, task_dirs  # noqa: E402

# Before any job: defaults filled in, the config valid, every pretraining job fits its runtime.
try:
    xcfg.validate(config)
    check_pretrain_runtime(config)
except ConfigError as err:
    raise WorkflowError(str(err)) from None

R = f"results/{config['run_name']}"
LOGS = f"logs/{config['run_name']}"
BENCH = f"benchmarks/{config['run_name']}"
SRC = config["source_language"]
PAIRS = list(config["pairs"])  # Table 1's pairs
SETTINGS = list(config["settings"])
TASKS = list(config["finetune"]["tasks"])
TARGETS = xcfg.target_languages(config)
MONO = xcfg.monolingual_models(config)
USE_TESTBED = "testbed" in config
TESTBED_MIRROR = f"{R}/testbed/mirror"  # the demo's offline mirror of every download
# every bilingual pretraining job (Table 1, and Figure 7's en-de and en-en' models), and the pairs
# whose BPE and binarised data are built for them
BILINGUAL = xcfg.bilingual_models(config)  # (setting, pair, seed)
PSEEDS = [int(x) for x in config["seeds"]["pretrain"]]  # Table 1's pretraining replicates
FSEEDS = [int(x) for x in config["seeds"]["finetune"]]  # and fine-tuning replicates of each
PSEED0, FSEED0 = xcfg.pretrain_seed(config), xcfg.finetune_seed(config)  # of models trained once
DATA_PAIRS = xcfg.data_pairs(config)
DATA_TARGETS = [xcfg.pair_langs(p)[1] for p in DATA_PAIRS]
CS_VARIANTS = int(config["codeswitch"]["variants"])
BPE_SPLITS = ("train", "valid", "test")


wildcard_constraints:
    setting="|".join(SETTINGS),
    pair="|".join(dict.fromkeys(p for _, p, _ in BILINGUAL)),
    pseed=r"\d+",
    fseed=r"\d+",
    lang="[a-z]{2,3}",
    task="|".join(TASKS),
    resource="[a-z0-9_]+",
    mono="|".join(MONO),
    domain="wiki|cc",


# ---------------------------------------------------------------------------------------------
# Resources, and the parameter bundles of the jobs (plain dicts: Snakemake compares them between
# runs, and a script turns each into the package's settings object)


def res(family):
    """Snakemake resources of a rule family, in the names snakemake-executor-plugin-slurm reads
    (mapping documented in xling.cluster.resources)."""
    return rule_resources(config, family)


def res_single(family):
    """A family's memory and runtime for a rule that runs on one core."""
    return rule_resources(config, family, cpus=1)


def threads_of(family):
    return rule_threads(config, family)


def setting(name):
    return config["settings"][name]


def pair_langs(pair):
    return xcfg.pair_langs(pair)


def tokenize_params(*langs):
    """How each language's text is tokenised, as its corpus was (xling.preprocess.TokenizeSettings
    without the segmenter's location, which is an input)."""
    out = {}
    for lang in langs:
        fields = asdict(TokenizeSettings.from_config(config, xcfg.data_language(lang)))
        fields.pop("stanford_home")
        out[xcfg.data_language(lang)] = fields
    return out


def split_params():
    """xling.preprocess.split.SplitSettings of the corpus split."""
    return asdict(SplitSettings.from_config(config["preprocess"]))


def codeswitch_params():
    cs = config["codeswitch"]
    keys = ("seed", "replace_prob", "max_fraction", "batch_words", "max_phrase_words", "lowercase_fallback")
    return {k: cs[k] for k in keys}


# ---------------------------------------------------------------------------------------------
# Downloads


def download_basename(rid):
    return Path(urlparse(config["downloads"][rid]["url"]).path).name


def downloaded(rid):
    """Path of a fetched file, or of its extracted directory for archives."""
    if config["downloads"][rid].get("extract"):
        return f"{R}/downloads/{rid}/extracted"
    return f"{R}/downloads/{rid}/{download_basename(rid)}"


def mirror_input():
    """The offline mirror downloads are served from (the demo's testbed writes it), as an input."""
    mirror = config["download"]["mirror"]
    return {"mirror": mirror} if mirror else {}


def segmenter_inputs(*langs):
    """``{"stanford": <extracted segmenter>}`` when any of ``langs`` is segmented with the Stanford
    segmenter (every stage that reads its raw text must segment it as the corpus was), else ``{}``."""
    return {"stanford": downloaded("stanford_segmenter")} if any(uses_stanford(config, l) for l in langs) else {}


# ---------------------------------------------------------------------------------------------
# Task data (licensed corpora may be missing: their NER cells are left out, with instructions)

NER_UNAVAILABLE = unavailable_ner_targets(config, generated_under=f"{R}/testbed" if USE_TESTBED else None)
for _lang, _why in NER_UNAVAILABLE.items():
    logger.warning(f"NER {SRC}-{_lang} is left out of this run: {_why}")

TASK_LANGS = sorted({SRC, *TARGETS})
TD_SPLITS = ("train", "dev", "test")
NER_TARGETS = [l for l in TARGETS if l not in NER_UNAVAILABLE]
NER_WIKIANN = sorted({SRC} | {l for l in NER_TARGETS if ner_dataset(config, l) == "wikiann"})
NER_LEVOW = sorted(l for l in NER_TARGETS if ner_dataset(config, l) == "levow")
TASK_EXT = {"xnli": "tsv", "ner": "bio", "parsing": "conllu"}


def licensed_files(cid):
    """The licensed corpus' files as inputs (Snakemake then checks them); in the demo the testbed
    directory stands in for them."""
    e = config["licensed"][cid]
    return [TESTBED_MIRROR] if USE_TESTBED else [f"{e['path']}/{f}" for f in e["files"]]


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


# ---------------------------------------------------------------------------------------------
# Corpus, code-switching, BPE and binarised data


def tok_shards(wc):
    return [f"{R}/corpus/{wc.lang}/shards/{wc.domain}.{i}.tok.txt" for i in range(n_shards(config, wc.lang))]


def canonical(name):
    """Settings whose BPE data are identical share the first such setting's directories."""
    return canonical_setting(config["settings"], name)


def dict_inputs(wc):
    if config["codeswitch"]["dictionary"] == "panlex":
        d = {"source": downloaded("panlex")}
    else:  # MUSE files are en -> target; the reverse direction is the same file read backwards
        d = {"source": downloaded(f"muse_{wc.src}_{wc.tgt}_train")}
    d.update(segmenter_inputs(wc.src, wc.tgt))  # entries are segmented like the corpus
    return d


def codeswitch_inputs(wc):
    d = {}
    for lang, other in ((wc.src, wc.tgt), (wc.tgt, wc.src)):
        d[f"{lang}_train"] = f"{R}/corpus/{lang}/wiki.train.txt"
        d[f"{lang}_dict"] = f"{R}/dict/{lang}-{other}.tsv"
    return d


def bpe_inputs(wc):
    st = setting(wc.setting)
    domains = dict(zip((wc.src, wc.tgt), st["domain"].split("-")))  # wiki-cc: en wiki, other cc
    d = {}
    for lang in (wc.src, wc.tgt):
        for split in BPE_SPLITS:
            d[f"{lang}_{split}"] = f"{R}/corpus/{lang}/{domains[lang]}.{split}.txt"
        if st["codeswitch"]:  # codes are learnt on the first switched copy
            d[f"{lang}_train"] = f"{R}/codeswitch/{wc.src}-{wc.tgt}/v0/{lang}.train.txt"
    return d


def mono_corpus(wc):
    return {f"{wc.lang}_{s}": f"{R}/corpus/{wc.lang}/wiki.{s}.txt" for s in BPE_SPLITS}


def switched_copies(setting_name):
    """Code-switched copies of the training text beyond the first (none without code-switching)."""
    return list(range(1, CS_VARIANTS)) if setting(setting_name)["codeswitch"] else []


def bpe_texts(bpe_dir, langs):
    """The BPE text files of a BPE directory, named ``<lang>_<split>`` as the binarisers read them."""
    return {f"{l}_{s}": f"{bpe_dir}/{l}.{s}.bpe" for l in langs for s in BPE_SPLITS}


def binarize_inputs(wc):
    bpe_dir = f"{R}/bpe/{wc.setting}/{wc.src}-{wc.tgt}"
    d = bpe_texts(bpe_dir, (wc.src, wc.tgt))
    for k in switched_copies(wc.setting):  # the dictionary counts every switched copy
        for l in (wc.src, wc.tgt):
            d[f"{l}_train_v{k}"] = f"{bpe_dir}/{l}.train.v{k}.bpe"
    return d


# ---------------------------------------------------------------------------------------------
# Pretraining


def pretrain_params():
    """The ``pretrain`` section as pretraining jobs receive it: options added later (``tensorboard``,
    ``sentence_window``) only when set, so that models trained before they existed do not look
    changed (their params would differ, and Snakemake would retrain them)."""
    return xcfg.pretrain_job_params(config["pretrain"])


def pretrain_languages(pair):
    """Source language first: its dev perplexity selects checkpoint_best.pt."""
    langs = list(pair_langs(pair))
    return [SRC] + [l for l in langs if l != SRC]


def pretrain_data_dir(setting_name, pair):
    """Binarised data of a bilingual model, with its dict.txt: the pair's directory (Table 1 rows
    with equal BPE share it); en-en_prime reads the monolingual English data."""
    if xcfg.is_prime(pair):
        return f"{R}/bin/mono/{pair}"
    return f"{R}/bin/{canonical(setting_name)}/{pair}"


def pretrain_data_dirs(w):
    """All data directories of a bilingual job: its own, then one per further code-switched copy."""
    base = pretrain_data_dir(w.setting, w.pair)
    if xcfg.is_prime(w.pair):
        return [base]
    return [base] + [f"{base}/v{k}" for k in switched_copies(w.setting)]


def pretrain_targets():
    return [f"{R}/pretrain/{s}/{p}/seed{seed}/done.json" for s, p, seed in BILINGUAL] + [
        f"{R}/pretrain/mono/{m}/done.json" for m in MONO
    ]


# ---------------------------------------------------------------------------------------------
# Fine-tuning


def finetune_hp_ids(task):
    return [xcfg.hp_id(c) for c in xcfg.grid_cells(config["finetune"][task])]


def finetune_task_files(w):
    """English train/dev and the target's dev/test of the pair (English NER is CoNLL-2003 for Levow)."""
    src_dir, tgt_dir = task_dirs(config, w.task, w.pair)
    ext, base = TASK_EXT[w.task], f"{R}/tasks/{w.task}"
    return {
        "train": f"{base}/{src_dir}/train.{ext}",
        "en_dev": f"{base}/{src_dir}/dev.{ext}",
        "tgt_dev": f"{base}/{tgt_dir}/dev.{ext}",
        "tgt_test": f"{base}/{tgt_dir}/test.{ext}",
    }


def finetune_job(w):
    """xling.finetune.FinetuneJob of one grid cell and fine-tuning seed (the parser's MLP sizes
    travel with its cell)."""
    ft, spec = config["finetune"], config["finetune"][w.task]
    hp = dict(xcfg.cell_from_id(spec, w.hp_id))
    if w.task == "parsing":
        hp.update(arc_mlp=spec["arc_mlp"], label_mlp=spec["label_mlp"])
    src, tgt = pair_langs(w.pair)
    return {
        "task": w.task,
        "src_lang": src,
        "tgt_lang": tgt,
        "hp": hp,
        "epochs": spec["epochs"],
        "epoch_size": spec["epoch_size"],
        "schedule": spec["schedule"],
        "warmup_fraction": spec["warmup_fraction"],
        "max_seq_len": ft["max_seq_len"],
        "seed": int(w.fseed),
        "max_train_examples": spec["max_train_examples"],
        "max_eval_examples": ft["max_eval_examples"],
        "tokenize": tokenize_params(src, tgt),
    }


def finetune_runs(task, pair):
    """Whether the (task, pair) cells can run: not an NER pair whose licensed corpus is missing."""
    return not (task == "ner" and pair_langs(pair)[1] in NER_UNAVAILABLE)


def finetune_cells():
    """(setting, pair, task, hp_id, pretraining seed, fine-tuning seed) of every fine-tuning job of Table 1."""
    return [
        (s, p, t, h, ps, fs)
        for s in SETTINGS
        for p in PAIRS
        for t in TASKS
        if finetune_runs(t, p)
        for h in finetune_hp_ids(t)
        for ps in PSEEDS
        for fs in FSEEDS
    ]


def finetune_result(s, p, t, h, ps, fs):
    """Where one fine-tuning job writes: under its pretrained model (setting, pair, its seed), then
    task, grid cell and fine-tuning seed."""
    return f"{R}/finetune/{s}/{p}/seed{ps}/{t}/{h}/seed{fs}/result.json"


def finetune_results():
    return [finetune_result(*cell) for cell in finetune_cells()]


# ---------------------------------------------------------------------------------------------
# Section 5 analyses

AN = config["analysis"]
AN_TARGETS = xcfg.analysis_targets(config)  # e.g. en_prime, fr, de, ru, zh
AN_RETRIEVAL = [t for t in AN_TARGETS if not xcfg.is_prime(t)]  # Tatoeba has no en' side
SRC_AND_RETRIEVAL = [SRC, *AN_RETRIEVAL] if AN_RETRIEVAL else []  # the languages with Figure 4 vectors
EN_PRIME_SOURCE = xcfg.en_prime_source(config)  # download | backtranslation | None
EN_PRIME_TEXT = f"{R}/analysis/en_prime/xnli.15way.{xcfg.prime(SRC)}.txt"


def mono_model_files(model):
    """A monolingual model's checkpoint, dictionary and BPE (en_prime reads English)."""
    lang = xcfg.data_language(model)
    return {
        f"{model}_checkpoint": f"{R}/pretrain/mono/{model}/checkpoint_best.pt",
        f"{model}_dictionary": f"{R}/bin/mono/{lang}/dict.txt",
        f"{model}_bpe": f"{R}/bpe/mono/{lang}/bpe.json",
    }


def bilingual_pair(target):
    """The pair whose bilingual model Figure 7 compares (pretrained for every Section 5 target,
    see xcfg.figure7_pairs), or None when the config trains none."""
    pair = f"{SRC}-{target}"
    return pair if pair in xcfg.figure7_pairs(config) else None


def bilingual_files(target):
    pair = bilingual_pair(target)
    if pair is None:
        return {}
    if xcfg.is_prime(target):  # English data under two language ids, English BPE
        return {
            "bi_checkpoint": f"{R}/pretrain/{AN['prime_setting']}/{pair}/seed{PSEED0}/checkpoint_best.pt",
            "bi_dictionary": f"{R}/bin/mono/{pair}/dict.txt",
            "bi_bpe": f"{R}/bpe/mono/{SRC}/bpe.json",
        }
    s = AN["bilingual_setting"]
    return {
        "bi_checkpoint": f"{R}/pretrain/{s}/{pair}/seed{PSEED0}/checkpoint_best.pt",
        "bi_dictionary": f"{R}/bin/{canonical(s)}/{pair}/dict.txt",
        "bi_bpe": f"{R}/bpe/{canonical(s)}/{pair}/bpe.json",
    }


def en_prime_sentences():
    """Figure 7's en' sentences: a ready download, or the back-translation rule's output."""
    return downloaded(AN["en_paraphrase"]) if EN_PRIME_SOURCE == "download" else EN_PRIME_TEXT


WORD_VECTOR_FILES = {
    "embedding": "embedding.npy",
    "embedding_words": "embedding.words.txt",
    "contextual": "contextual.npy",
    "contextual_words": "contextual.words.tsv",
}


def word_vector_files(lang):
    """Figure 4's vectors of one monolingual model (rule word_vectors)."""
    return {k: f"{R}/analysis/words/{lang}/{v}" for k, v in WORD_VECTOR_FILES.items()}


def word_alignment_inputs(w):
    """Both languages' word vectors, fastText's and the MUSE dictionaries of one Figure 4 pair."""
    langs = (SRC, w.target)
    return {
        **{f"{lang}_{k}": v for lang in langs for k, v in word_vector_files(lang).items()},
        **{f"fasttext_{lang}": downloaded(f"fasttext_{lang}") for lang in langs},
        "muse_train": downloaded(f"muse_{SRC}_{w.target}_train"),
        "muse_test": downloaded(f"muse_{SRC}_{w.target}_test"),
    }


FIG5 = AN["transfer"]
FIG5_PAIRS = xcfg.figure5_pairs(config)
FAST_ALIGN = {tool: f"{R}/tools/fast_align/{tool}" for tool in ("fast_align", "atools")}


def figure5_cells():
    """(task, pair, layer) of every Figure 5 job; NER pairs whose licensed corpus is missing are left out."""
    return [(t, p, i) for t in FIG5["tasks"] for p in FIG5_PAIRS if finetune_runs(t, p) for i in FIG5["layers"]]


def figure5_results():
    return [f"{R}/analysis/transfer/{t}/{p}/L{i}.json" for t, p, i in figure5_cells()]


def figure5_job(w):
    """The xling.finetune.FinetuneJob fields of a Figure 5 job (Table 1's recipe for the task; its
    hp is each grid cell in turn), and the grid itself."""
    job = finetune_job(SimpleNamespace(task=w.task, pair=w.pair, hp_id=finetune_hp_ids(w.task)[0], fseed=FSEED0))
    spec = config["finetune"][w.task]
    extra = {"arc_mlp": spec["arc_mlp"], "label_mlp": spec["label_mlp"]} if w.task == "parsing" else {}
    return {"job": job, "grid": [{**c, **extra} for c in xcfg.grid_cells(spec)]}


def figure5_inputs(w):
    """Both monolingual models, the bilingual model, both maps and the task files of one job."""
    target = pair_langs(w.pair)[1]
    files = finetune_task_files(w)
    return {
        **mono_model_files(SRC),
        **mono_model_files(target),
        **bilingual_files(target),
        "maps_mono": f"{R}/analysis/transfer/maps/mono/{w.pair}.npz",
        "maps_bilingual": f"{R}/analysis/transfer/maps/bilingual/{w.pair}.npz",
        "train": files["train"],
        "en_dev": files["en_dev"],
        "tgt_test": files["tgt_test"],
        **segmenter_inputs(*pair_langs(w.pair)),
    }


def maps_inputs(w):
    """The links of a pair and the model(s) its maps are learnt with."""
    target = pair_langs(w.pair)[1]
    models = {**mono_model_files(SRC), **mono_model_files(target)} if w.kind == "mono" else bilingual_files(target)
    return {"links": f"{R}/analysis/transfer/links/{w.pair}.tsv", **models}


def retrieval_inputs(w):
    """Both monolingual models of a Section 5 job, and the segmenter where a language needs it."""
    return {**mono_model_files(SRC), **mono_model_files(w.target), **segmenter_inputs(xcfg.data_language(w.target))}


def cka_inputs(w):
    """As retrieval_inputs, plus the pair's bilingual model and, for en-en', the en' sentences."""
    d = {**retrieval_inputs(w), **bilingual_files(w.target)}
    if xcfg.is_prime(w.target):
        d["paraphrase"] = en_prime_sentences()
    return d


# Shared-space curve: a bilingual model's two languages retrieve each other (no map) at every
# checkpoint its pretraining kept (xling.analysis.shared_space)
SHARED = AN["shared_space"]
SHARED_MODELS = [(s, p, seed) for s, p, seed in BILINGUAL if s in SHARED["settings"] and p in PAIRS]
SHARED_REPORT = {"shared_png": "shared_space.png", "shared_pdf": "shared_space.pdf", "shared_csv": "shared_space.csv"}


def shared_space_inputs(w):
    """The finished pretraining job (its fairseq/ folder holds the interval checkpoints), its
    dictionary and BPE, and the segmenter where a language needs it."""
    return {
        "done": f"{R}/pretrain/{w.setting}/{w.pair}/seed{w.pseed}/done.json",
        "dictionary": f"{pretrain_data_dir(w.setting, w.pair)}/dict.txt",
        "bpe": f"{R}/bpe/{canonical(w.setting)}/{w.pair}/bpe.json",
        **segmenter_inputs(*pair_langs(w.pair)),
    }


# ---------------------------------------------------------------------------------------------
# Export to transformers


def shares_everything(setting_name):
    """A row whose embeddings and layers all languages share maps onto BERT (xling.export)."""
    sep = config["settings"][setting_name]["separate"]
    return not sep["embeddings"] and int(sep["layers"]) == 0


# Exported once per model: its first seed's replicate
HF_BILINGUAL = [(s, p) for s, p, seed in BILINGUAL if seed == PSEED0 and shares_everything(s)]


def hf_export_inputs(w):
    """The pretrained model's checkpoint, dictionary and BPE (mono/<model>, or <setting>/<pair>)."""
    if w.setting == "mono":
        return {k.removeprefix(f"{w.model}_"): v for k, v in mono_model_files(w.model).items()}
    prime = xcfg.is_prime(w.model)
    return {
        "checkpoint": f"{R}/pretrain/{w.setting}/{w.model}/seed{PSEED0}/checkpoint_best.pt",
        "dictionary": f"{pretrain_data_dir(w.setting, w.model)}/dict.txt",
        "bpe": f"{R}/bpe/mono/{SRC}/bpe.json" if prime else f"{R}/bpe/{canonical(w.setting)}/{w.model}/bpe.json",
    }


def hf_export_languages(w):
    return [xcfg.data_language(w.model)] if w.setting == "mono" else pair_langs(w.model)


def hf_export_targets():
    if not config["export"]["huggingface"]:
        return []
    return [f"{R}/hf/{s}/{p}" for s, p in HF_BILINGUAL] + [f"{R}/hf/mono/{m}" for m in MONO]


# ---------------------------------------------------------------------------------------------
# Reports and the targets of `all`

DEMO_NOTE = "Synthetic testbed (config/demo.yaml), not the paper's data." if USE_TESTBED else ""


def table1_params():
    """How Table 1 is aggregated, as rules report and findings both receive it."""
    return {
        "settings": SETTINGS,
        "labels": {s: config["settings"][s]["label"] for s in SETTINGS},
        "pairs": PAIRS,
        "tasks": TASKS,
        "top_k": config["finetune"]["top_k"],
        "baseline": "default",
        "source": SRC,
        "note": DEMO_NOTE,
        # cells left out for want of a licensed corpus: task -> target language -> what to do
        "unavailable": {"ner": {l: f"needs licensed data: {why}" for l, why in NER_UNAVAILABLE.items()}},
    }


REPORT_FILES = {
    "table1_md": "table1.md",
    "table1_csv": "table1.csv",
    "table1_tex": "table1.tex",
    "vs_md": "table1_vs_paper.md",
    "vs_csv": "table1_vs_paper.csv",
    "fig_png": "figure3.png",
    "fig_pdf": "figure3.pdf",
}
LEDGER_FILES = {"ledger_md": "compute.md", "ledger_csv": "compute.csv"}
FINDINGS_FILES = {"findings_md": "findings.md", "findings_csv": "findings.csv"}
ANALYSIS_REPORT = {
    "fig4a_png": "figure4a.png",
    "fig4a_pdf": "figure4a.pdf",
    "fig4b_png": "figure4b.png",
    "fig4b_pdf": "figure4b.pdf",
    "fig4_csv": "figure4.csv",
    **(
        {
            "fig5_png": "figure5.png",
            "fig5_pdf": "figure5.pdf",
            "fig8_png": "figure8.png",
            "fig8_pdf": "figure8.pdf",
            "fig5_csv": "figure5.csv",
        }
        if FIG5_PAIRS
        else {}
    ),
    "fig6_png": "figure6.png",
    "fig6_pdf": "figure6.pdf",
    "fig7_png": "figure7.png",
    "fig7_pdf": "figure7.pdf",
    "tables_md": "analysis.md",
}

# ---------------------------------------------------------------------------------------------
# The compute ledger: what the pretraining, fine-tuning and BPE jobs cost (xling.report.ledger)


# Benchmark files of the rules the ledger counts (their `benchmark:`), as wildcard patterns
BENCH_FILES = {
    "pretrain": f"{BENCH}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}.tsv",
    "pretrain_mono": f"{BENCH}/pretrain/mono/{{mono}}.tsv",
    "finetune": f"{BENCH}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}.tsv",
    "bpe": f"{BENCH}/bpe/{{setting}}/{{src}}-{{tgt}}.tsv",
    "bpe_mono": f"{BENCH}/bpe/mono/{{lang}}.tsv",
}


def ledger_job(output, rule, family, model=(None, None), **wildcards):
    """A job the ledger counts: its declared output (the ledger's input, so that the ledger runs
    after it), the model it belongs to (setting, pair) and where its benchmark file is."""
    gpus = int(config["rule_resources"][family]["gpus"])
    bench = BENCH_FILES[rule].format(**wildcards)
    return output, {"rule": rule, "setting": model[0], "pair": model[1], "gpus": gpus, "benchmark": bench}


def ledger_jobs():
    """Pretraining (bilingual, monolingual), fine-tuning and BPE jobs, as ledger_job pairs."""
    jobs = [
        ledger_job(
            f"{R}/pretrain/{s}/{p}/seed{ps}/done.json", "pretrain", "pretrain", (s, p), setting=s, pair=p, pseed=ps
        )
        for s, p, ps in BILINGUAL
    ]
    jobs += [
        ledger_job(f"{R}/pretrain/mono/{m}/done.json", "pretrain_mono", "pretrain", ("mono", m), mono=m) for m in MONO
    ]
    jobs += [
        ledger_job(
            finetune_result(s, p, t, h, ps, fs),
            "finetune",
            "finetune",
            (s, p),
            setting=s,
            pair=p,
            task=t,
            hp_id=h,
            pseed=ps,
            fseed=fs,
        )
        for s, p, t, h, ps, fs in finetune_cells()
    ]
    bpe_dirs = dict.fromkeys((canonical(s), p) for s, p, _ in BILINGUAL if not xcfg.is_prime(p))
    jobs += [
        ledger_job(f"{R}/bpe/{s}/{p}/bpe.json", "bpe", "bpe", setting=s, src=pair_langs(p)[0], tgt=pair_langs(p)[1])
        for s, p in bpe_dirs
    ]
    jobs += [
        ledger_job(f"{R}/bpe/mono/{l}/bpe.json", "bpe_mono", "bpe", lang=l)
        for l in dict.fromkeys(xcfg.data_language(m) for m in MONO)
    ]
    return jobs


def planned_pretrain_hours():
    """The budget's hours per pretrained model, all its seeds together (no margin), and the
    throughput they assume."""
    rate = planned_rate(config, pretrain_device(config))
    hours = {}
    for e in pretrain_estimates(config, rate, margin=1.0):
        hours[e.job.model] = hours.get(e.job.model, 0.0) + e.hours
    return {k: round(v, 4) for k, v in hours.items()}, rate.basis


LEDGER_JOBS = ledger_jobs()
PLANNED_PRETRAIN_HOURS, PLANNING_BASIS = planned_pretrain_hours()


# What `snakemake --report` shows, by output key: (category, caption file in workflow/report/).
# Figures as PNG (shown inline), tables as CSV where one exists (shown as tables).
TABLE1_CATEGORY = "1. Table 1: zero-shot transfer"
SECTION5_CATEGORY = "3. Section 5: monolingual models"
REPORT_SHOWN = {
    "table1_csv": (TABLE1_CATEGORY, "table1.rst"),
    "findings_csv": ("0. Findings: the paper's claims", "findings.rst"),
    "vs_csv": (TABLE1_CATEGORY, "table1_vs_paper.rst"),
    "fig_png": (TABLE1_CATEGORY, "figure3.rst"),
    "anchors_md": ("2. Anchor points", "anchors.rst"),
    "fig4a_png": (SECTION5_CATEGORY, "figure4a.rst"),
    "fig4b_png": (SECTION5_CATEGORY, "figure4b.rst"),
    "fig5_png": (SECTION5_CATEGORY, "figure5.rst"),
    "fig8_png": (SECTION5_CATEGORY, "figure8.rst"),
    "fig6_png": (SECTION5_CATEGORY, "figure6.rst"),
    "fig7_png": (SECTION5_CATEGORY, "figure7.rst"),
    "tables_md": (SECTION5_CATEGORY, "analysis.rst"),
    "ledger_md": ("4. Compute", "compute.rst"),
    "shared_png": (SECTION5_CATEGORY, "shared_space.rst"),
}


def reported(files):
    """A rule's ``output:`` mapping, with the files of REPORT_SHOWN marked for the Snakemake report."""
    out = {}
    for key, path in files.items():
        if key in REPORT_SHOWN:
            category, caption = REPORT_SHOWN[key]
            path = report(path, category=category, caption=str(Path(workflow.basedir) / "workflow/report" / caption))
        out[key] = path
    return out


# ---------------------------------------------------------------------------------------------
# Liu et al. 2020 (rules in liu2020.smk; target `liu2020`)

LIU = config["liu2020"]
LIU_LANGS = xcfg.liu_languages(config)  # source language first
LIU_SIZES = [int(n) for n in LIU["sizes"]]
LIU_WINDOWS = [xcfg.liu_window_id(w) for w in LIU["windows"]]
LIU_RETRIEVED = xcfg.liu_retrieval_languages(config) if LIU_LANGS else []
LIU_STATIC = ["word2vec", "glove"]
LIU_MODELS = [f"mlm_{w}" for w in LIU_WINDOWS] + LIU_STATIC  # every model scored at every size
LIU_REPORT = {"png": "liu2020/retrieval.png", "pdf": "liu2020/retrieval.pdf", "csv": "liu2020/retrieval.csv"}
LIU_DIRECTIONS = xcfg.liu_directions(config) if LIU_LANGS else []
LIU_TR_LANGS = sorted({l for d in LIU_DIRECTIONS for l in d})
# XNLI languages of the study beyond Table 1's (their dev and test sets: rule liu_taskdata_xnli)
LIU_XNLI_EXTRA = [l for l in LIU_LANGS if l not in TASK_LANGS]
LIU_XNLI_REPORT = {
    "table_md": "liu2020/table4.md",
    "table_csv": "liu2020/table4.csv",
    "fig_png": "liu2020/xnli.png",
    "fig_pdf": "liu2020/xnli.pdf",
}
LIU_MBERT = LIU["mbert"] if LIU_DIRECTIONS else None  # m-BERT's Section 4, beside our MLMs'
LIU_MBERT_RESULT = f"{R}/liu/translation/mbert.json"
LIU_TR_REPORT = {
    "table_md": "liu2020/table2.md",
    "table_csv": "liu2020/table2.csv",
    "fig_png": "liu2020/figure7_8.png",
    "fig_pdf": "liu2020/figure7_8.pdf",
}


def liu_bpe_inputs(w):
    """Each language's sampled training text, and its whole validation and test splits."""
    d = {}
    for l in LIU_LANGS:
        d[f"{l}_train"] = f"{R}/liu/corpus/n{w.size}/{l}.train.txt"
        for split in ("valid", "test"):
            d[f"{l}_{split}"] = f"{R}/corpus/{l}/wiki.{split}.txt"
    return d


def liu_model_kind(model):
    return "static" if model in LIU_STATIC else "mlm"


def liu_retrieval_inputs(w):
    """The model's files, every language's BPE training text and the MUSE dictionaries."""
    if liu_model_kind(w.model) == "static":
        d = {"vectors": f"{R}/liu/static/{w.model}/n{w.size}/vectors.vec"}
    else:
        window = w.model[len("mlm_") :]
        d = {
            "checkpoint": f"{R}/liu/pretrain/n{w.size}/{window}/checkpoint_best.pt",
            "dictionary": f"{R}/liu/bin/n{w.size}/dict.txt",
        }
    for l in [SRC, *LIU_RETRIEVED]:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
    for l in LIU_RETRIEVED:
        d[f"dict_{l}"] = downloaded(xcfg.liu_dictionary_id(config, l))
    return d


def liu_translation_inputs(w):
    """The MLM's files, the translated languages' training texts and vocabularies, XNLI-15way."""
    d = {
        "checkpoint": f"{R}/liu/pretrain/n{w.size}/{w.window}/checkpoint_best.pt",
        "dictionary": f"{R}/liu/bin/n{w.size}/dict.txt",
        "bpe": f"{R}/liu/bpe/n{w.size}/bpe.json",
        "way15": downloaded("xnli_15way"),
    }
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
        d[f"vocab_{l}"] = f"{R}/liu/bin/n{w.size}/dict.{l}.txt"
    d.update(segmenter_inputs(*LIU_TR_LANGS))  # 15-way sentences are segmented as the corpus was
    return d


def liu_translation_mbert_inputs(w):
    """m-BERT's files, the translated languages' sample lines (the smallest size), XNLI-15way."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]], "way15": downloaded("xnli_15way")}
    for l in LIU_TR_LANGS:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    return d


def liu_xnli_files():
    """Every XNLI job's task files: the source language's train, each language's dev and test, and
    the segmenter where one is needed (XNLI sentences are segmented as the corpus was)."""
    d = {"train": f"{R}/tasks/xnli/{SRC}/train.tsv"}
    for l in LIU_LANGS:
        d[f"dev_{l}"] = f"{R}/tasks/xnli/{l}/dev.tsv"
        d[f"test_{l}"] = f"{R}/tasks/xnli/{l}/test.tsv"
    d.update(segmenter_inputs(*LIU_LANGS))
    return d


def liu_xnli_mbert_inputs(w):
    """m-BERT's files, the XNLI files and every language's sample lines (its means)."""
    d = {"model": [downloaded(rid) for rid in LIU_MBERT["model_files"]], **liu_xnli_files()}
    for l in LIU_LANGS:
        d[f"text_{l}"] = f"{R}/liu/corpus/n{min(LIU_SIZES)}/{l}.train.txt"
    return d


def liu_xnli_results():
    """The XNLI results the report reads: each MLM's and static model's, then m-BERT's when configured."""
    ours = [f"{R}/liu/xnli/n{n}/{m}.json" for n in LIU_SIZES for m in [*LIU_WINDOWS, *LIU_STATIC]]
    return ours + ([f"{R}/liu/xnli/mbert.json"] if LIU_MBERT else [])


def liu_translation_results():
    """The token translation results the report reads: each MLM's, then m-BERT's when configured."""
    ours = [f"{R}/liu/translation/n{n}/{w}.json" for n in LIU_SIZES for w in LIU_WINDOWS]
    return ours + ([LIU_MBERT_RESULT] if LIU_MBERT else [])


def liu_xnli_inputs(w):
    """The MLM's files, the source language's XNLI train and every language's dev, test and BPE text."""
    d = {
        "checkpoint": f"{R}/liu/pretrain/n{w.size}/{w.window}/checkpoint_best.pt",
        "dictionary": f"{R}/liu/bin/n{w.size}/dict.txt",
        "bpe": f"{R}/liu/bpe/n{w.size}/bpe.json",
        **liu_xnli_files(),
    }
    for l in LIU_LANGS:
        d[f"text_{l}"] = f"{R}/liu/bpe/n{w.size}/{l}.train.bpe"
    return d


def liu_xnli_static_inputs(w):
    """The static vectors, the BPE they are vectors of, the source language's XNLI train and every
    language's dev and test."""
    return {
        "vectors": f"{R}/liu/static/{w.method}/n{w.size}/vectors.vec",
        "bpe": f"{R}/liu/bpe/n{w.size}/bpe.json",
        **liu_xnli_files(),
    }


def liu_xnli_static_params():
    """The static models' XNLI classifier (liu2020.xnli.static) with finetune.xnli's length and caps."""
    ft, spec = config["finetune"], config["finetune"]["xnli"]
    return {
        **LIU["xnli"]["static"],
        "epochs": spec["epochs"],
        "max_train_examples": spec["max_train_examples"],
        "max_eval_examples": ft["max_eval_examples"],
        "max_seq_len": ft["max_seq_len"],
        "seed": int(FSEED0),
    }


def liu_xnli_job():
    """xling.finetune.FinetuneJob fields of the study's XNLI fine-tuning (finetune.xnli's length and
    schedule, liu2020.xnli's cell)."""
    ft, spec = config["finetune"], config["finetune"]["xnli"]
    return {
        "task": "xnli",
        "src_lang": SRC,
        "tgt_lang": SRC,
        "hp": xcfg.liu_xnli_hp(config),
        "epochs": spec["epochs"],
        "epoch_size": spec["epoch_size"],
        "schedule": spec["schedule"],
        "warmup_fraction": spec["warmup_fraction"],
        "max_seq_len": ft["max_seq_len"],
        "seed": int(FSEED0),
        "max_train_examples": spec["max_train_examples"],
        "max_eval_examples": ft["max_eval_examples"],
        "tokenize": tokenize_params(*LIU_LANGS),
    }


def liu_model_labels():
    labels = {"word2vec": "word2vec", "glove": "GloVe"}
    for window, w in zip(LIU_WINDOWS, LIU["windows"]):
        labels[f"mlm_{window}"] = "MLM" if w == "full" else f"MLM, {w}-token windows"
    if LIU_MBERT:
        labels["mbert"] = "m-BERT (bert-base-multilingual-cased)"
    return labels


def liu_targets():
    """What target `liu2020` builds (nothing when liu2020.languages is empty)."""
    if not LIU_LANGS:
        return []
    out = [f"{R}/report/{v}" for v in LIU_REPORT.values()]
    if LIU_DIRECTIONS:
        out += [f"{R}/report/{v}" for v in LIU_TR_REPORT.values()]
    out += [f"{R}/report/{v}" for v in LIU_XNLI_REPORT.values()]
    return out


def all_targets():
    """Everything `all` builds."""
    return [
        *taskdata_targets(),
        *pretrain_targets(),
        *(f"{R}/report/{v}" for v in REPORT_FILES.values()),
        *((f"{R}/report/{v}" for v in ANALYSIS_REPORT.values()) if AN_TARGETS else ()),
        *((f"{R}/report/{v}" for v in SHARED_REPORT.values()) if SHARED_MODELS else ()),
        f"{R}/report/anchors.md",
        *(f"{R}/report/{v}" for v in LEDGER_FILES.values()),
        *(f"{R}/report/{v}" for v in FINDINGS_FILES.values()),
        *hf_export_targets(),
    ]
