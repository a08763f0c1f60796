# What every stage shares: the package on the path, the config validated (and every pretraining job
# checked against its runtime) before any job, the run's paths and replicates, wildcards, resources
# and the tokenisation settings several stages pass on. Each stage's input functions, output names
# and params live in its own rule file; the Snakefile includes them in pipeline order, so a stage
# may name an earlier stage's outputs (rules.<name>.output) and functions.

import sys
from dataclasses import asdict
from pathlib import Path

# This process imports the package as every script does: through workflow/scripts/_setup.py.
sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "scripts"))
import _setup  # noqa: E402,F401

from xling import config as xcfg  # noqa: E402
from xling.bpe import canonical_setting  # noqa: E402
from xling.cluster.budget import check_pretrain_runtime  # noqa: E402
from xling.cluster.resources import rule_resources, rule_threads  # noqa: E402
from xling.errors import ConfigError, InputError, stop_planning  # noqa: E402
from xling.preprocess.plan import uses_stanford  # noqa: E402
from xling.preprocess.tokenize import TokenizeSettings  # noqa: E402
from xling.report.bundle import check_bundle  # noqa: E402

# Before any job: defaults filled in, the config valid, every pretraining job fits its runtime,
# and a results bundle given with --config bundle=... intact and made with this config.
try:
    xcfg.validate(config)
    check_pretrain_runtime(config)
    BUNDLE = check_bundle(config["bundle"], config) if config["bundle"] else None
except (ConfigError, InputError) as err:
    # the Snakefile's configfile is merged first, then those given with --configfile
    cli = list(workflow.overwrite_configfiles)
    raise stop_planning(err, [*workflow.configfiles[len(cli) :], *cli]) from None

R = f"results/{config['run_name']}"
LOGS = f"logs/{config['run_name']}"
BENCH = f"benchmarks/{config['run_name']}"
SRC = config["source_language"]
PAIRS = list(config["pairs"])  # Table 1's pairs
# Table 1's rows: those trained on some pair (pair_rows can leave one out of every pair)
SETTINGS = [s for s in config["settings"] if any(xcfg.trains(config, s, p) for p in config["pairs"])]
TASKS = list(config["finetune"]["tasks"])
TARGETS = xcfg.target_languages(config)
MONO = xcfg.monolingual_models(config)
USE_TESTBED = "testbed" in config
# every bilingual pretraining job (Table 1, and Figure 7's en-de and en-en' models), and the pairs
# whose BPE and binarised data are built for them
BILINGUAL = xcfg.bilingual_models(config)  # (setting, pair, seed)
FSEEDS = [int(x) for x in config["seeds"]["finetune"]]  # fine-tuning replicates of each pretrained model
PSEED0, FSEED0 = xcfg.pretrain_seed(config), xcfg.finetune_seed(config)  # of models trained once
DATA_PAIRS = xcfg.data_pairs(config)
DATA_TARGETS = [xcfg.pair_langs(p)[1] for p in DATA_PAIRS]
BPE_SPLITS = ("train", "valid", "test")
REPORT_NOTE = config["report"]["note"]  # what the run is made of, when not the paper's data


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


def canonical(name):
    """Settings whose BPE data are identical share the first such setting's directories."""
    return canonical_setting(config["settings"], name)


def tokenize_params(*langs):
    """How each language's text is tokenised, as its corpus was (xling.preprocess.TokenizeSettings
    without the segmenter's location, which is an input: segmenter_inputs)."""
    out = {}
    for lang in langs:
        fields = asdict(TokenizeSettings.from_config(config, xcfg.data_language(lang)))
        fields.pop("stanford_home")
        out[xcfg.data_language(lang)] = fields
    return out


def segmenter_inputs(*langs):
    """``{"stanford": <extracted segmenter>}`` when any of ``langs`` is segmented with the Stanford
    segmenter (every stage that reads its raw text must segment it as the corpus was), else ``{}``."""
    return {"stanford": downloaded("stanford_segmenter")} if any(uses_stanford(config, l) for l in langs) else {}


def all_targets():
    """Everything `all` builds: each stage's final outputs."""
    return [
        *taskdata_targets(),
        *pretrain_targets(),
        *report_targets(),
        *analysis_report_targets(),
        *hf_export_targets(),
    ]
