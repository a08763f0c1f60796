# Shared by every stage: config validation, paths, resources, and the target lists of `all`.

import sys
from pathlib import Path

# The package lives in src/; importing it from there keeps the workflow runnable from a checkout
# even where only Snakemake is installed (e.g. the main process of a conda-per-rule run).
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from xling import config as xcfg  # noqa: E402
from xling.cluster.budget import check_pretrain_runtime  # noqa: E402
from xling.cluster.resources import rule_resources, rule_threads  # noqa: E402
from xling.errors import ConfigError  # noqa: E402

# Before any job: the config is valid, and every pretraining job fits its runtime resource.
try:
    xcfg.validate(config)
    check_pretrain_runtime(config)
except ConfigError as err:
    raise WorkflowError(str(err)) from None

R = f"results/{config['run_name']}"
LOGS = f"logs/{config['run_name']}"
SRC = config["source_language"]
PAIRS = list(config["pairs"])  # Table 1's pairs
SETTINGS = list(config["settings"])
TASKS = list(config["finetune"]["tasks"])
TARGETS = xcfg.target_languages(config)
MONO = xcfg.monolingual_models(config)
USE_TESTBED = "testbed" in config
# every bilingual pretraining job (Table 1, and Figure 7's en-de and en-en' models), and the pairs
# whose BPE and binarised data are built for them
BILINGUAL = xcfg.bilingual_models(config)
DATA_PAIRS = xcfg.data_pairs(config)
DATA_TARGETS = [xcfg.pair_langs(p)[1] for p in DATA_PAIRS]
CS_VARIANTS = int(config["codeswitch"]["variants"])


wildcard_constraints:
    setting="|".join(SETTINGS),
    pair="|".join(dict.fromkeys(p for _, p in BILINGUAL)),
    lang="[a-z]{2,3}",
    task="|".join(TASKS),
    resource="[a-z0-9_]+",
    mono="|".join(MONO),
    domain="wiki|cc",


def res(family):
    """Snakemake resources of a rule family, in the names snakemake-executor-plugin-slurm reads
    (mapping documented in xling.cluster.resources)."""
    return rule_resources(config, family)


def threads_of(family):
    return rule_threads(config, family)


def pair_langs(pair):
    return xcfg.pair_langs(pair)


def setting(name):
    return config["settings"][name]


def all_targets():
    """Everything `all` builds; grows stage by stage."""
    return [
        *taskdata_targets(),
        *pretrain_targets(),
        *rules.report.output,
        *analysis_targets(),
        f"{R}/report/anchors.md",
    ]
