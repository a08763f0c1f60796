# MLM pretraining (paper 3.1, Table 1 separation options, Section 5 monolingual models).
# Outputs: done.json + checkpoint_best.pt (a hard link); a Table 1 model once per pretraining seed.
# fairseq's own checkpoints, which a killed/requeued job resumes from, live in <out>/fairseq/ and
# are deliberately NOT outputs: Snakemake deletes a rerun job's outputs before it starts. Every
# value a job uses reaches it through one typed bundle, xling.pretrain.job.PretrainJob.

import functools
from types import SimpleNamespace

from xling.pretrain.job import ALL_SHARED, PretrainJob

PRETRAIN_PARAMS = ("data_dirs", "setting", "model", "pretrain", "languages", "seed")


def pretrain_params(job):
    """A rule's params: the tracked fields of the PretrainJob that ``job(wildcards)`` builds, one
    param each (what workflow/scripts/pretrain.py receives), the job built once per job."""
    tracked = functools.cache(lambda *wildcards: job(SimpleNamespace(**dict(wildcards))).tracked())
    return {name: (lambda w, name=name: tracked(*w.items())[name]) for name in PRETRAIN_PARAMS}


def pretrain_languages(pair):
    """Source language first: its dev perplexity selects checkpoint_best.pt."""
    langs = list(pair_langs(pair))
    return [SRC] + [l for l in langs if l != SRC]


def pretrain_data_dirs(w):
    """All data directories of a bilingual job: its own, then one per further code-switched copy."""
    base = bin_dir(w.setting, w.pair)
    if xcfg.is_prime(w.pair):
        return [base]
    return [base] + [f"{base}/v{k}" for k in switched_copies(w.setting)]


def bilingual_job(w):
    """A Table 1 row's (or Figure 7's) model of a pair, one pretraining seed."""
    return PretrainJob.build(
        pretrain_data_dirs(w),
        setting(w.setting),
        config["model"],
        config["pretrain"],
        pretrain_languages(w.pair),
        int(w.pseed),
    )


def mono_job(w):
    """A monolingual model of Section 5; en' is English again with another seed."""
    lang = xcfg.data_language(w.mono)
    seed = xcfg.monolingual_seed(config, w.mono)
    return PretrainJob.build([f"{R}/bin/mono/{lang}"], ALL_SHARED, config["model"], config["pretrain"], [lang], seed)


def checkpoint(setting_name, pair, seed):
    """A bilingual model's best checkpoint (rule pretrain)."""
    return f"{R}/pretrain/{setting_name}/{pair}/seed{seed}/checkpoint_best.pt"


def mono_model_files(model):
    """A monolingual model's checkpoint, dictionary and BPE (en_prime reads English)."""
    lang = xcfg.data_language(model)
    return {
        f"{model}_checkpoint": f"{R}/pretrain/mono/{model}/checkpoint_best.pt",
        f"{model}_dictionary": f"{R}/bin/mono/{lang}/dict.txt",
        f"{model}_bpe": f"{R}/bpe/mono/{lang}/bpe.json",
    }


def pretrain_targets():
    return [f"{R}/pretrain/{s}/{p}/seed{seed}/done.json" for s, p, seed in BILINGUAL] + [
        f"{R}/pretrain/mono/{m}/done.json" for m in MONO
    ]


rule pretrain:
    input:
        dictionary=lambda w: f"{pretrain_data_dirs(w)[0]}/dict.txt",
        copies=lambda w: [f"{d}/{l}/train.bin" for d in pretrain_data_dirs(w)[1:] for l in pair_langs(w.pair)],
    output:
        done=f"{R}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}/done.json",
        best=f"{R}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}/checkpoint_best.pt",
    log:
        f"{LOGS}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}.log",
    benchmark:
        f"{BENCH}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}.tsv"
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    params:
        **pretrain_params(bilingual_job),
    script:
        "../scripts/pretrain.py"


rule pretrain_mono:
    input:
        dictionary=lambda w: f"{R}/bin/mono/{xcfg.data_language(w.mono)}/dict.txt",
    output:
        done=f"{R}/pretrain/mono/{{mono}}/done.json",
        best=f"{R}/pretrain/mono/{{mono}}/checkpoint_best.pt",
    log:
        f"{LOGS}/pretrain/mono/{{mono}}.log",
    benchmark:
        f"{BENCH}/pretrain/mono/{{mono}}.tsv"
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    params:
        **pretrain_params(mono_job),
    script:
        "../scripts/pretrain.py"
