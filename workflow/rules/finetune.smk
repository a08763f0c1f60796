# Zero-shot fine-tuning (paper 3.2): one job per (setting, pair, task, hyperparameter cell).
# Results: R/finetune/<setting>/<pair>/<task>/<hp_id>/result.json (aggregated by rule report).

from xling.taskdata.layout import task_dirs as _task_dirs

TASK_EXT = {"xnli": "tsv", "ner": "bio", "parsing": "conllu"}


def finetune_hp_ids(task):
    return [xcfg.hp_id(c) for c in xcfg.grid_cells(config["finetune"][task])]


def finetune_task_files(w):
    """English train/dev and the target's dev/test of the pair (English NER is CoNLL-2003 for Levow)."""
    src_dir, tgt_dir = _task_dirs(config, w.task, w.pair)
    ext = TASK_EXT[w.task]
    base = f"{R}/tasks/{w.task}"
    return [f"{base}/{src_dir}/train.{ext}", f"{base}/{src_dir}/dev.{ext}",
            f"{base}/{tgt_dir}/dev.{ext}", f"{base}/{tgt_dir}/test.{ext}"]


def finetune_hp(w):
    """The grid cell of the job; the parser's MLM sizes travel with it."""
    ft = config["finetune"]
    hp = dict(xcfg.cell_from_id(ft[w.task], w.hp_id))
    if w.task == "parsing":
        hp.update(arc_mlp=ft["parsing"]["arc_mlp"], label_mlp=ft["parsing"]["label_mlp"])
    return hp


def finetune_stanford_home(w):
    """Raw XNLI sentences of a Stanford-segmented language need the segmenter, as pretraining did."""
    langs = pair_langs(w.pair)
    if w.task == "xnli" and segmenter_inputs(*langs):
        return downloaded("stanford_segmenter")
    return None


rule finetune:
    input:
        checkpoint=f"{R}/pretrain/{{setting}}/{{pair}}/checkpoint_best.pt",
        dictionary=lambda w: f"{R}/bin/{canonical(w.setting)}/{w.pair}/dict.txt",
        bpe=lambda w: f"{R}/bpe/{canonical(w.setting)}/{w.pair}/bpe.json",
        tasks=finetune_task_files,
    output:
        result=f"{R}/finetune/{{setting}}/{{pair}}/{{task}}/{{hp_id}}/result.json",
    log:
        f"{LOGS}/finetune/{{setting}}/{{pair}}/{{task}}/{{hp_id}}.log",
    params:
        task=lambda w: w.task,
        task_dir=lambda w: f"{R}/tasks/{w.task}",
        task_dirs=lambda w: list(_task_dirs(config, w.task, w.pair)),
        src=lambda w: pair_langs(w.pair)[0],
        tgt=lambda w: pair_langs(w.pair)[1],
        hp=finetune_hp,
        epochs=lambda w: config["finetune"][w.task]["epochs"],
        epoch_size=lambda w: config["finetune"][w.task].get("epoch_size"),
        schedule=lambda w: config["finetune"][w.task]["schedule"],
        warmup_fraction=lambda w: config["finetune"][w.task].get("warmup_fraction", 0.0),
        max_seq_len=config["finetune"]["max_seq_len"],
        seed=config["finetune"]["seed"],
        stanford_home=finetune_stanford_home,
        # a task's own cap wins over the global one (null: the whole training set)
        max_train_examples=lambda w: config["finetune"][w.task].get(
            "max_train_examples", config["finetune"].get("max_train_examples")),
        meta=lambda w: {"setting": w.setting, "pair": w.pair, "task": w.task, "hp_id": w.hp_id},
    conda:
        "../../envs/fairseq.yaml"
    threads: threads_of("finetune")
    resources:
        **res("finetune"),
    script:
        "../scripts/finetune.py"


def finetune_runs(task, pair):
    """Whether the (task, pair) cells can run: not an NER pair whose licensed corpus is missing."""
    return not (task == "ner" and pair_langs(pair)[1] in NER_UNAVAILABLE)


def finetune_results():
    return [f"{R}/finetune/{s}/{p}/{t}/{h}/result.json"
            for s in SETTINGS for p in PAIRS for t in TASKS if finetune_runs(t, p) for h in finetune_hp_ids(t)]
