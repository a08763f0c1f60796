# Zero-shot fine-tuning (paper 3.2): one job per (setting, pair, pretraining seed, task,
# hyperparameter cell, fine-tuning seed), with an xling.finetune.FinetuneJob as its params.
# Results: R/finetune/<setting>/<pair>/seed<p>/<task>/<hp_id>/seed<f>/result.json (rule report).

from xling.taskdata.layout import task_dirs


def finetune_hp_ids(task):
    return [xcfg.hp_id(c) for c in xcfg.grid_cells(config["finetune"][task])]


def finetune_task_files(w):
    """English train/dev and the target's dev/test of the pair (English NER is CoNLL-2003 for Levow)."""
    src_dir, tgt_dir = task_dirs(config, w.task, w.pair)
    return {
        "train": task_file(w.task, src_dir, "train"),
        "en_dev": task_file(w.task, src_dir, "dev"),
        "tgt_dev": task_file(w.task, tgt_dir, "dev"),
        "tgt_test": task_file(w.task, tgt_dir, "test"),
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


def finetune_cells(settings=None, pairs=None):
    """(setting, pair, task, hp_id, pretraining seed, fine-tuning seed) of every fine-tuning job of
    Table 1, or of the given rows and pairs only."""
    return [
        (s, p, t, h, ps, fs)
        for s in settings or SETTINGS
        for p in pairs or PAIRS
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


def finetune_results(settings=None, pairs=None):
    return [finetune_result(*cell) for cell in finetune_cells(settings, pairs)]


rule finetune:
    input:
        unpack(finetune_task_files),
        # raw XNLI sentences of a Stanford-segmented language are segmented as pretraining text was
        unpack(lambda w: segmenter_inputs(*pair_langs(w.pair))),
        checkpoint=rules.pretrain.output.best,
        dictionary=lambda w: f"{bin_dir(w.setting, w.pair)}/dict.txt",
        bpe=lambda w: bpe_manifest(w.setting, w.pair),
    output:
        result=f"{R}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}/result.json",
    log:
        f"{LOGS}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}.log",
    benchmark:
        f"{BENCH}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{{task}}/{{hp_id}}/seed{{fseed}}.tsv"
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
