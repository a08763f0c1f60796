"""Code-switching with a bilingual dictionary (the paper's Extra anchors, Section 4.2).

For every occurrence of a dictionary entry in the training text (longest source phrase first,
left to right, entries up to `max_phrase_words` words): keep it with probability 1 - p, else
replace it by a translation sampled in proportion to its weight. At most `max_fraction` of the
words of a batch are replaced. A batch is a run of whole consecutive lines holding at least
`batch_words` words (the last one may hold fewer); when the replacement candidates of a batch
cover more words than the cap allows, a random subset of them is kept (candidates in random
order, each taken if it still fits), so the cap does not favour the start of a batch.

Everything is drawn from one `random.Random(seed)` in file order: same input and seed, same
output. Memory is one batch.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator

from xling.codeswitch.dictionary import PhraseDictionary
from xling.io import atomic_write
from xling.progress import progress


@dataclass
class SwitchStats:
    lines: int = 0
    words: int = 0
    dictionary_words: int = 0        # words covered by dictionary matches
    dictionary_matches: int = 0      # matched entries (a phrase counts once)
    candidate_words: int = 0         # words drawn for replacement (before the cap)
    replaced_words: int = 0          # source words replaced
    replaced_matches: int = 0
    batches: int = 0
    capped_batches: int = 0          # batches where the cap dropped candidates
    max_batch_fraction: float = 0.0  # largest replaced/words over batches

    def summary(self) -> dict:
        d = asdict(self)
        d["rate_of_dictionary_words"] = self.replaced_words / self.dictionary_words if self.dictionary_words else 0.0
        d["rate_of_words"] = self.replaced_words / self.words if self.words else 0.0
        d["dictionary_coverage"] = self.dictionary_words / self.words if self.words else 0.0
        return d


def batches(lines: Iterable[list[str]], batch_words: int) -> Iterator[list[list[str]]]:
    """Whole consecutive lines, at least `batch_words` words per batch (the last may hold fewer)."""
    if batch_words < 1:
        raise ValueError(f"batch_words must be >= 1, got {batch_words}")
    batch: list[list[str]] = []
    n = 0
    for words in lines:
        batch.append(words)
        n += len(words)
        if n >= batch_words:
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def _sample(rng: random.Random, options: tuple, weights: tuple) -> tuple[str, ...]:
    cum = list(itertools.accumulate(weights))
    return options[bisect.bisect_right(cum, rng.random() * cum[-1])]


def switch_batch(batch: list[list[str]], dictionary: PhraseDictionary, rng: random.Random,
                 replace_prob: float, max_fraction: float, stats: SwitchStats) -> list[list[str]]:
    """Code-switch one batch of tokenised lines; returns the new lines and updates `stats`."""
    n_words = sum(len(w) for w in batch)
    cap = math.floor(max_fraction * n_words)
    candidates = []  # (line index, start, length, dictionary entry)
    for li, words in enumerate(batch):
        i = 0
        while i < len(words):
            k, entry = dictionary.longest_match(words, i, len(words))
            if entry is None:  # k == 0
                i += 1
                continue
            stats.dictionary_matches += 1
            stats.dictionary_words += k
            if rng.random() < replace_prob:
                candidates.append((li, i, k, entry))
            i += k
    stats.candidate_words += sum(c[2] for c in candidates)
    chosen = candidates
    if sum(c[2] for c in candidates) > cap:
        order = list(range(len(candidates)))
        rng.shuffle(order)
        taken, used = set(), 0
        for j in order:
            if used + candidates[j][2] <= cap:
                taken.add(j)
                used += candidates[j][2]
        chosen = [c for j, c in enumerate(candidates) if j in taken]
        stats.capped_batches += 1

    replace = {}  # (line, start) -> (length, translation)
    for li, i, k, entry in chosen:  # file order, so translation draws are reproducible
        options, weights = dictionary.translations(entry)
        replace[(li, i)] = (k, _sample(rng, options, weights))
    out = []
    for li, words in enumerate(batch):
        new: list[str] = []
        i = 0
        while i < len(words):
            r = replace.get((li, i))
            if r is None:
                new.append(words[i])
                i += 1
            else:
                new.extend(r[1])
                i += r[0]
        out.append(new)

    replaced = sum(c[2] for c in chosen)
    stats.replaced_words += replaced
    stats.replaced_matches += len(chosen)
    stats.batches += 1
    stats.lines += len(batch)
    stats.words += n_words
    if n_words:
        stats.max_batch_fraction = max(stats.max_batch_fraction, replaced / n_words)
    return out


def codeswitch_lines(lines: Iterable[str], dictionary: PhraseDictionary, seed: int | str,
                     replace_prob: float = 0.3, max_fraction: float = 0.15,
                     batch_words: int = 4096, stats: SwitchStats | None = None) -> Iterator[str]:
    """Code-switched lines (without newline) of tokenised `lines`, streaming batch by batch."""
    if not 0 <= replace_prob <= 1 or not 0 <= max_fraction <= 1:
        raise ValueError("replace_prob and max_fraction must be in [0, 1]")
    rng = random.Random(seed)
    stats = stats if stats is not None else SwitchStats()
    for batch in batches((line.split() for line in lines), batch_words):
        for words in switch_batch(batch, dictionary, rng, replace_prob, max_fraction, stats):
            yield " ".join(words)


def codeswitch_file(src: Path, dst: Path, dictionary: PhraseDictionary, seed: int | str,
                    replace_prob: float = 0.3, max_fraction: float = 0.15,
                    batch_words: int = 4096) -> dict:
    """Code-switch a tokenised text file into `dst` (atomically); returns the stats summary."""
    stats = SwitchStats()
    with open(src, encoding="utf-8") as fin, atomic_write(dst) as fout:
        lines = codeswitch_lines(fin, dictionary, seed, replace_prob, max_fraction, batch_words, stats)
        for line in progress(lines, desc=f"code-switch {Path(src).name}", unit="line"):
            fout.write(line + "\n")
    return stats.summary()


def write_report(report: dict, path: Path) -> None:
    with atomic_write(path) as fh:
        json.dump(report, fh, indent=2, sort_keys=True)
        fh.write("\n")
