# Zero-shot fine-tuning (paper 3.2): each grid cell of a (setting, pair, pretraining seed, task,
# fine-tuning seed) with an xling.finetune.FinetuneJob. The cells that share a batch size train
# together in one job (finetune_grid_<task>: every weight with a cell axis, xling.finetune.run_grid),
# a grid with one cell per batch size as jobs of one cell. Results:
# R/finetune/<setting>/<pair>/seed<p>/<task>/<hp_id>/seed<f>/result.json (rule table1).

from types import SimpleNamespace

from xling.finetune.job import GRID_RULE, FinetuneJob, Hyperparameters, cell_hp, cells_by_batch_size
from xling.taskdata.layout import task_dirs

GRID_JOBS = config["finetune"]["grid_jobs"]


def finetune_hp_ids(task):
    return [xcfg.hp_id(c) for c in xcfg.grid_cells(config["finetune"][task])]


def finetune_task_files(w):
    """English train/dev and the target's dev/test of the pair (English NER is CoNLL-2003 for Levow);
    parsing's extra test sets of the target (tgt_extra_<name>) and of the source (src_extra_<name>)."""
    src_dir, tgt_dir = task_dirs(config, w.task, w.pair)
    files = {
        "train": task_file(w.task, src_dir, "train"),
        "en_dev": task_file(w.task, src_dir, "dev"),
        "tgt_dev": task_file(w.task, tgt_dir, "dev"),
        "tgt_test": task_file(w.task, tgt_dir, "test"),
    }
    if w.task == "parsing":
        for name, langs in UD_EXTRA.items():
            for side, folder in (("tgt", tgt_dir), ("src", src_dir)):
                if folder in langs:
                    files[f"{side}_extra_{name}"] = task_file(w.task, folder, name)
    return files


def grid_hp_ids(task, batch_size):
    """The cells one grid job of ``task`` trains, in xling.finetune.job.cells_by_batch_size's order."""
    return [xcfg.hp_id(c) for c in cells_by_batch_size(config["finetune"][task])[int(batch_size)]]


def grid_outputs(task):
    """A grid job's result.json files: its cells' hp_ids with the batch size as the wildcard {bs}."""
    first = next(iter(cells_by_batch_size(config["finetune"][task]).values()))
    cell_dirs = [xcfg.hp_id({**c, "batch_size": "{bs}"}) for c in first]
    return [f"{R}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{task}/{h}/seed{{fseed}}/result.json" for h in cell_dirs]


def finetune_meta(w, task, hp_id):
    return {
        "setting": w.setting,
        "pair": w.pair,
        "task": task,
        "hp_id": hp_id,
        "pretrain_seed": int(w.pseed),
        "finetune_seed": int(w.fseed),
    }


def finetune_job(w):
    """xling.finetune.FinetuneJob of one grid cell and fine-tuning seed."""
    src, tgt = pair_langs(w.pair)
    hp = cell_hp(config["finetune"], w.task, w.hp_id)
    return FinetuneJob.build(config["finetune"], w.task, src, tgt, hp, int(w.fseed), tokenize_params(src, tgt))


def finetune_runs(task, pair):
    """Whether the (task, pair) cells can run: not an NER pair whose licensed corpus is missing."""
    return not (task == "ner" and pair_langs(pair)[1] in NER_UNAVAILABLE)


def finetune_cells(settings=None, pairs=None, tasks=None):
    """(setting, pair, task, hp_id, pretraining seed, fine-tuning seed) of every fine-tuning job of
    Table 1, or of the given rows, pairs and tasks only."""
    return [
        (s, p, t, h, ps, fs)
        for s in settings or SETTINGS
        for p in pairs or PAIRS
        if xcfg.trains(config, s, p)
        for t in tasks or TASKS
        if finetune_runs(t, p)
        for h in finetune_hp_ids(t)
        for ps in xcfg.row_seeds(config, s, p)
        for fs in FSEEDS
    ]


def grid_jobs(settings=None, pairs=None):
    """(setting, pair, task, batch size, pretraining seed, fine-tuning seed) of every grid job."""
    return [
        (s, p, t, bs, ps, fs)
        for s in settings or SETTINGS
        for p in pairs or PAIRS
        if xcfg.trains(config, s, p)
        for t in TASKS
        if finetune_runs(t, p)
        for bs in cells_by_batch_size(config["finetune"][t])
        for ps in xcfg.row_seeds(config, s, p)
        for fs in FSEEDS
    ]


def finetune_result(s, p, t, h, ps, fs):
    """Where one fine-tuning job writes: under its pretrained model (setting, pair, its seed), then
    task, grid cell and fine-tuning seed."""
    return f"{R}/finetune/{s}/{p}/seed{ps}/{t}/{h}/seed{fs}/result.json"


def finetune_results(settings=None, pairs=None, tasks=None):
    return [finetune_result(*cell) for cell in finetune_cells(settings, pairs, tasks)]


for _task in TASKS:

    rule:
        name:
            GRID_RULE.format(task=_task)
        input:
            unpack(lambda w, t=_task: finetune_task_files(SimpleNamespace(task=t, pair=w.pair))),
            unpack(lambda w: segmenter_inputs(*pair_langs(w.pair))),
            checkpoint=rules.pretrain.output.best,
            dictionary=lambda w: f"{bin_dir(w.setting, w.pair)}/dict.txt",
            bpe=lambda w: bpe_manifest(w.setting, w.pair),
        output:
            grid_outputs(_task),
        log:
            f"{LOGS}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{_task}/grid_bs{{bs}}/seed{{fseed}}.log",
        benchmark:
            f"{BENCH}/finetune/{{setting}}/{{pair}}/seed{{pseed}}/{_task}/grid_bs{{bs}}/seed{{fseed}}.tsv"
        wildcard_constraints:
            bs=r"\d+",
        conda:
            "../../envs/fairseq.yaml"
        threads: threads_of("finetune")
        resources:
            **res("finetune"),
        params:
            jobs=lambda w, t=_task: [
                finetune_job(SimpleNamespace(task=t, pair=w.pair, hp_id=h, fseed=w.fseed)).tracked()
                for h in grid_hp_ids(t, w.bs)
            ],
            metas=lambda w, t=_task: [finetune_meta(w, t, h) for h in grid_hp_ids(t, w.bs)],
            grid=GRID_JOBS,
        script:
            "../scripts/finetune_grid.py"
