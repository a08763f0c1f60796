# Wu, Conneau et al. 2020, "Emerging Cross-lingual Structure in Pretrained Language Models":
# corpus -> BPE -> code-switching -> MLM pretraining -> zero-shot fine-tuning -> Table 1 / Figures.
# Paper scale: `snakemake --profile slurm all`; demo: `make demo` (config/demo.yaml).

from snakemake.utils import min_version

min_version("9.0")


# Found from the Snakefile, so `--directory elsewhere` runs still get the defaults.
configfile: f"{workflow.basedir}/config/config.yaml"


# `snakemake --report report.html`: Table 1, the figures and tables, with captions (workflow/report/)
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/testbed.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/taskdata.smk"
include: "workflow/rules/preprocess.smk"
include: "workflow/rules/codeswitch.smk"
include: "workflow/rules/bpe.smk"
include: "workflow/rules/binarize.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/transfer.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/export.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/report_section5.smk"
include: "workflow/rules/report_ledger.smk"
include: "workflow/rules/liu2020.smk"
include: "workflow/rules/liu2020_retrieval.smk"
include: "workflow/rules/liu2020_translation.smk"
include: "workflow/rules/liu2020_xnli.smk"
include: "workflow/rules/bundle.smk"


rule all:
    input:
        all_targets(),


# Liu et al. 2020 (liu2020 in the config): `snakemake liu2020`
rule liu2020:
    input:
        liu_targets(),


# Every table and figure (Wu et al.'s, and Liu et al.'s where configured); from a results bundle:
# `snakemake --configfile R/bundle.config.yaml --config bundle=R/bundle.tar.gz report`
rule report:
    input:
        all_reports(),


# a target name that does not exist: the closest ones (`make targets` lists them all)
include: "workflow/rules/targets.smk"
