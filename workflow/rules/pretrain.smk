# MLM pretraining (paper 3.1, Table 1 separation options, Section 5 monolingual models).
# Outputs: done.json + checkpoint_best.pt (a hard link); a Table 1 model once per pretraining seed. fairseq's own checkpoints, which a
# killed/requeued job resumes from, live in <out>/fairseq/ and are deliberately NOT outputs:
# Snakemake deletes a rerun job's outputs before it starts.


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
        BENCH_FILES["pretrain"]
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    params:
        data_dirs=pretrain_data_dirs,
        setting=lambda w: setting(w.setting),
        model=config["model"],
        pretrain=pretrain_params(),
        languages=lambda w: pretrain_languages(w.pair),
        seed=lambda w: int(w.pseed),
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
        BENCH_FILES["pretrain_mono"]
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("pretrain")
    resources:
        **res("pretrain"),
    params:
        data_dirs=lambda w: [f"{R}/bin/mono/{xcfg.data_language(w.mono)}"],
        setting={"separate": {"embeddings": False, "layers": 0}},
        model=config["model"],
        pretrain=pretrain_params(),
        languages=lambda w: [xcfg.data_language(w.mono)],
        # en' (Section 5) is English again with another seed
        seed=lambda w: config["monolingual"]["en_prime_seed"] if xcfg.is_prime(w.mono) else PSEED0,
    script:
        "../scripts/pretrain.py"
