"""Toy task files of the three fine-tuning tasks over a small vocabulary (learnable in a few
epochs by a tiny encoder), and the en -> fr jobs and files of the fine-tuning rule's shape; shared
by the fine-tuning tests. Imports no fairseq."""

from __future__ import annotations

from xling.finetune import FinetuneJob, Hyperparameters, TaskFiles

LANGS = ["en", "fr"]
WORDS = [f"w{i}" for i in range(12)] + ["yes", "maybe", "no"] + [f"p{i}" for i in range(4)] + \
        [f"q{i}" for i in range(4)] + [f"l{i}" for i in range(4)] + [f"v{i}" for i in range(4)] + \
        [f"n{i}" for i in range(6)]


def per_word(lang):
    return lambda words: [[w] for w in words]


def make_nli(rng, n):
    rows = []
    for _ in range(n):
        label = rng.choice(["entailment", "neutral", "contradiction"])
        cue = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}[label]
        prem = " ".join(rng.choice(WORDS[:12]) for _ in range(rng.randint(2, 5)))
        hyp = [rng.choice(WORDS[:12]) for _ in range(rng.randint(1, 4))]
        hyp.insert(rng.randint(0, len(hyp)), cue)
        rows.append(f"{prem}\t{' '.join(hyp)}\t{label}")
    return "premise\thypothesis\tlabel\n" + "\n".join(rows) + "\n"


def make_ner(rng, n):
    sents = []
    for _ in range(n):
        lines = []
        for _ in range(rng.randint(3, 7)):
            r = rng.random()
            if r < 0.2:
                lines += [f"{rng.choice(WORDS[15:19])}\tB-PER", f"{rng.choice(WORDS[19:23])}\tI-PER"]
            elif r < 0.35:
                lines.append(f"{rng.choice(WORDS[23:27])}\tB-LOC")
            else:
                lines.append(f"{rng.choice(WORDS[:12])}\tO")
        sents.append("\n".join(lines))
    return "\n\n".join(sents) + "\n"


def make_ud(rng, n):
    """One verb (v*) is the root; every other word attaches to it, nouns before it as nsubj, after as obj."""
    out = []
    for k in range(n):
        m = rng.randint(3, 7)
        v = rng.randint(1, m)
        lines = [f"# sent_id = {k}"]
        for i in range(1, m + 1):
            if i == v:
                lines.append(f"{i}\t{rng.choice(WORDS[27:31])}\t_\tVERB\t_\t_\t0\troot\t_\t_")
            else:
                rel = "nsubj" if i < v else "obj:lvc"
                lines.append(f"{i}\t{rng.choice(WORDS[31:37])}\t_\tNOUN\t_\t_\t{v}\t{rel}\t_\t_")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n\n"


SUFFIX = {"xnli": "tsv", "ner": "bio", "parsing": "conllu"}


def write_task_dir(root, seed: int, sizes: dict[str, int]):
    """Every task's train/dev/test files of LANGS under ``root/<task>/<lang>/`` (``sizes``: split ->
    examples), as the task-data stage writes them; returns ``root``."""
    import random

    rng = random.Random(seed)
    for task, make, suffix in [("xnli", make_nli, "tsv"), ("ner", make_ner, "bio"), ("parsing", make_ud, "conllu")]:
        for lang in LANGS:
            for split, n in sizes.items():
                p = root / task / lang / f"{split}.{suffix}"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(make(rng, n), encoding="utf-8")
    return root


def finetune_one(job: FinetuneJob, encoder, words_to_subwords, files: TaskFiles, **kw) -> dict:
    """One cell fine-tuned as a grid of one (xling.finetune.finetune_grid): its result record."""
    from xling.finetune import finetune_grid

    return finetune_grid([job], encoder, words_to_subwords, files, **kw)[0]


def job(task, hp, epochs, seed, max_seq_len=64, **kw) -> FinetuneJob:
    """An en -> fr job of the fine-tuning rule's shape."""
    return FinetuneJob(task=task, src_lang="en", tgt_lang="fr", hp=Hyperparameters.of(hp), epochs=epochs, seed=seed,
                       max_seq_len=max_seq_len, warmup_fraction=0.1, **kw)


def files(task_dir, task) -> TaskFiles:
    root, x = task_dir / task, SUFFIX[task]
    return TaskFiles(train=root / "en" / f"train.{x}", en_dev=root / "en" / f"dev.{x}",
                     tgt_dev=root / "fr" / f"dev.{x}", tgt_test=root / "fr" / f"test.{x}")
