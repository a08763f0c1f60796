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
    return xcfg.data_language(model)


def pretrain_data_dirs(w):
    """Binarised data of a bilingual job: the pair's directory (Table 1 rows with equal BPE share
    it), then one per further code-switched copy; en-en_prime reads the monolingual English data."""
    if xcfg.is_prime(w.pair):
        return [f"{R}/bin/mono/{w.pair}"]
    base = f"{R}/bin/{canonical(w.setting)}/{w.pair}"
    return [base] + [f"{base}/v{k}" for k in switched_copies(w.setting)]


rule pretrain:
    input:
        dictionary=lambda w: f"{pretrain_data_dirs(w)[0]}/dict.txt",
        copies=lambda w: [f"{d}/{l}/train.bin" for d in pretrain_data_dirs(w)[1:] for l in pair_langs(w.pair)],
    output:
        done=f"{R}/pretrain/{{setting}}/{{pair}}/done.json",
        best=f"{R}/pretrain/{{setting}}/{{pair}}/checkpoint_best.pt",
    log:
        f"{LOGS}/pretrain/{{setting}}/{{pair}}.log",
    params:
        data_dirs=pretrain_data_dirs,
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
        data_dirs=lambda w: [f"{R}/bin/mono/{mono_data_lang(w.mono)}"],
        setting=PRETRAIN_NO_SEPARATION,
        model=config["model"],
        pretrain=config["pretrain"],
        languages=lambda w: [mono_data_lang(w.mono)],
        seed=lambda w: config["monolingual"]["en_prime_seed"] if xcfg.is_prime(w.mono) else None,
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    script:
        "../scripts/pretrain.py"


def pretrain_targets():
    return [f"{R}/pretrain/{s}/{p}/done.json" for s, p in BILINGUAL] + [
        f"{R}/pretrain/mono/{m}/done.json" for m in MONO
    ]
