# Zero-shot fine-tuning (paper 3.2): one job per (setting, pair, pretraining seed, task,
# hyperparameter cell, fine-tuning seed). Results: R/finetune/<setting>/<pair>/seed<p>/<task>/
# <hp_id>/seed<f>/result.json (aggregated by rule report).


rule finetune:
    input:
        unpack(finetune_task_files),
        # raw XNLI sentences of a Stanford-segmented language are segmented as pretraining text was
        unpack(lambda w: segmenter_inputs(*pair_langs(w.pair))),
        checkpoint=f"{R}/pretrain/{{setting}}/{{pair}}/seed{{pseed}}/checkpoint_best.pt",
        dictionary=lambda w: f"{R}/bin/{canonical(w.setting)}/{w.pair}/dict.txt",
        bpe=lambda w: f"{R}/bpe/{canonical(w.setting)}/{w.pair}/bpe.json",
    output:
        result=f"{R}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}/result.json",
    log:
        f"{LOGS}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}.log",
    benchmark:
        BENCH_FILES["finetune"]
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("finetune")
    resources:
        **res("finetune"),
    params:
        job=finetune_job,
        meta=lambda w: {
            "setting": w.setting,
            "pair": w.pair,
            "task": w.task,
            "hp_id": w.hp_id,
            "pretrain_seed": int(w.pseed),
            "finetune_seed": int(w.fseed),
        },
    script:
        "../scripts/finetune.py"
