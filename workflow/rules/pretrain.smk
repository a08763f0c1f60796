# MLM pretraining (paper 3.1, Table 1 separation options, Section 5 monolingual models).
# Outputs: done.json + checkpoint_best.pt (a hard link). fairseq's own checkpoints, which a
# killed/requeued job resumes from, live in <out>/fairseq/ and are deliberately NOT outputs:
# Snakemake deletes a rerun job's outputs before it starts.

PRETRAIN_NO_SEPARATION = {"separate": {"embeddings": False, "layers": 0}}


def pretrain_languages(pair):
    """Source language first: its dev perplexity selects checkpoint_best.pt."""
    langs = list(pair_langs(pair))
    return [SRC] + [l for l in langs if l != SRC]


def mono_data_lang(model):
    """en_prime is English again with another seed: it trains on en's data."""
    return model.removesuffix("_prime")


rule pretrain:
    input:
        dictionary=lambda w: f"{R}/bin/{canonical(w.setting)}/{w.pair}/dict.txt",
    output:
        done=f"{R}/pretrain/{{setting}}/{{pair}}/done.json",
        best=f"{R}/pretrain/{{setting}}/{{pair}}/checkpoint_best.pt",
    log:
        f"{LOGS}/pretrain/{{setting}}/{{pair}}.log",
    params:
        setting=lambda w: setting(w.setting),
        model=config["model"],
        pretrain=config["pretrain"],
        languages=lambda w: pretrain_languages(w.pair),
        seed=None,
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    script:
        "../scripts/pretrain.py"


rule pretrain_mono:
    input:
        dictionary=lambda w: f"{R}/bin/mono/{mono_data_lang(w.mono)}/dict.txt",
    output:
        done=f"{R}/pretrain/mono/{{mono}}/done.json",
        best=f"{R}/pretrain/mono/{{mono}}/checkpoint_best.pt",
    log:
        f"{LOGS}/pretrain/mono/{{mono}}.log",
    params:
        setting=PRETRAIN_NO_SEPARATION,
        model=config["model"],
        pretrain=config["pretrain"],
        languages=lambda w: [mono_data_lang(w.mono)],
        seed=lambda w: config["monolingual"]["en_prime_seed"] if w.mono.endswith("_prime") else None,
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    script:
        "../scripts/pretrain.py"


def pretrain_targets():
    return [f"{R}/pretrain/{s}/{p}/done.json" for s in SETTINGS for p in PAIRS] + [
        f"{R}/pretrain/mono/{m}/done.json" for m in MONO
    ]
