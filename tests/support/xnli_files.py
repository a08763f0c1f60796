"""Random XNLI files (``premise<TAB>hypothesis<TAB>label``) over given words, for the tests of the
jobs that fine-tune on XNLI: the labels cycle, the sentences are random draws."""

from __future__ import annotations

import random
from pathlib import Path

LABELS = ("entailment", "neutral", "contradiction")


def write_xnli_files(root: Path, words: dict[str, list[str]], sizes: dict[str, int], rng: random.Random,
                     premise_len: int = 4, hypothesis_len: int = 3) -> dict[tuple[str, str], Path]:
    """``root/xnli/<lang>/<split>.tsv`` for every language of ``words`` and split of ``sizes``."""
    files = {}
    for lang, w in words.items():
        for split, n in sizes.items():
            path = Path(root) / "xnli" / lang / f"{split}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = [f"{' '.join(rng.choice(w) for _ in range(premise_len))}\t"
                    f"{' '.join(rng.choice(w) for _ in range(hypothesis_len))}\t{LABELS[i % 3]}" for i in range(n)]
            path.write_text("premise\thypothesis\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8")
            files[lang, split] = path
    return files
