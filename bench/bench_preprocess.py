"""Benchmark: Moses tokenisation + BPE application, reference CLI chain vs our sharded pipeline.

(a) reference: ``sacremoses -l en -j 1 -q tokenize -x < input | subword-nmt apply-bpe -c codes``
    (``--chain xlm``: ``sacremoses ... normalize -p -c tokenize -x``, XLM's full tokenize.sh chain)
(b) ours: split_shards into --workers shards, one process per shard running
    xling.preprocess.moses.MosesPipeline (chunk-cached exact Moses) + a per-word cached
    subword-nmt BPE, then the shards are interleaved back into corpus order.
The outputs must be byte-identical; the script checks and prints it. Note: in the installed
sacremoses/click the CLI's ``-x`` flag does not turn XML escaping off (it is a flag whose default
is already True), so the reference output is escaped and (b) escapes too (escape=True).

Usage: python bench/bench_preprocess.py [--input FILE] [--lines 200000] [--workers 2] [--chain xlm]
Wall time is what the target is about; CPU time (user+sys, children included) is printed too
because the 2 cores may be shared with other jobs.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing as mp
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe

from xling.preprocess.moses import MosesPipeline
from xling.preprocess.shards import interleave, split_shards

_FUNCTION_WORDS = ("the of and to in a is that for it as was with be by on not he I this are or "
                   "his from at which but have an they you were her she there been one all we "
                   "their has would when if so no will more can its said who about than").split()


def english_like_lines(n: int, seed: int = 0) -> list[str]:
    """Seeded English-like sentences: Zipfian words, punctuation, numbers, quotes, abbreviations."""
    rng = random.Random(seed)
    onsets = ["b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st",
              "tr", "ch", "sh", "pl", "gr", "th", "br", "cl"]
    vowels = ["a", "e", "i", "o", "u", "ea", "ou", "io", "ai"]
    codas = ["", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck", "rt", "m"]
    vocab = set()
    while len(vocab) < 20000:
        k = rng.choice((1, 2, 2, 3, 3, 4))
        vocab.add("".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(k)))
    words = _FUNCTION_WORDS + sorted(vocab)
    weights = [1.0 / (r + 1) for r in range(len(words))]  # Zipf
    extras = ["Mr.", "Dr.", "U.S.", "e.g.", "don't", "isn't", "John's", "(see above)", '"quoted"',
              "1,234", "3.5", "42%", "well-known", "and/or", "$5", "&", "etc.", "1990s", "..."]
    lines = []
    for _ in range(n):
        m = rng.randint(6, 32)
        toks = rng.choices(words, weights, k=m)
        for i in range(m):
            r = rng.random()
            if r < 0.06:
                toks[i] = rng.choice(extras)
            elif r < 0.14:
                toks[i] += ","
            elif r < 0.18:
                toks[i] = toks[i].capitalize()
        toks[0] = toks[0][:1].upper() + toks[0][1:]
        lines.append(" ".join(toks) + rng.choice(".....?!:"))
    return lines


class CachedBPE:
    """subword-nmt's BPE with the whole per-word output string cached (same output as
    ``BPE.process_line`` on Moses-tokenised lines: single spaces, no glossaries)."""

    def __init__(self, codes: str):
        with open(codes, encoding="utf-8") as fh:
            self.bpe = BPE(fh)
        self.cache: dict[str, str] = {}

    def word(self, w: str) -> str:
        out = self.cache.get(w)
        if out is None:
            out = " ".join(self.bpe.segment_tokens([w]))
            if len(self.cache) > 2_000_000:
                self.cache.clear()
            self.cache[w] = out
        return out

    def line(self, line: str) -> str:
        return " ".join([self.word(w) for w in line.split(" ") if w])


def _process_shard(args: tuple[str, str, str, str, bool]) -> int:
    src, dst, codes, lang, normalize = args
    moses = MosesPipeline(lang, normalize=normalize, escape=True)
    bpe = CachedBPE(codes)
    n = 0
    with open(src, encoding="utf-8", newline="\n") as fi, open(dst, "w", encoding="utf-8") as fo:
        for line in fi:
            fo.write(bpe.line(moses(line.rstrip("\n"))) + "\n")
            n += 1
    return n


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_reference(inp: Path, codes: Path, out: Path, lang: str, normalize: bool) -> tuple[float, float]:
    bindir = Path(sys.executable).parent
    steps = "normalize -p -c tokenize -x" if normalize else "tokenize -x"
    cmd = (f"'{bindir}/sacremoses' -l {lang} -j 1 -q {steps} < '{inp}' | "
           f"'{bindir}/subword-nmt' apply-bpe -c '{codes}' > '{out}'")
    c0, t0 = _cpu(), time.perf_counter()
    subprocess.run(["bash", "-o", "pipefail", "-c", cmd], check=True)
    return time.perf_counter() - t0, _cpu() - c0


def run_ours(inp: Path, codes: Path, out: Path, lang: str, workers: int, tmp: Path,
             normalize: bool) -> tuple[float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    shards = [tmp / f"shard.{i}.txt" for i in range(workers)]
    outs = [tmp / f"shard.{i}.bpe" for i in range(workers)]
    split_shards(inp, shards)
    with mp.get_context("fork").Pool(workers) as pool:
        pool.map(_process_shard, [(str(s), str(o), str(codes), lang, normalize)
                                  for s, o in zip(shards, outs)])
        pool.close()
        pool.join()  # reap the workers so their CPU time is counted
    with open(out, "w", encoding="utf-8") as fo:
        for line in interleave(outs):
            fo.write(line + "\n")
    return time.perf_counter() - t0, _cpu() - c0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, help="raw text, one sentence a line (default: generated)")
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--lang", default="en")
    ap.add_argument("--merges", type=int, default=10_000)
    ap.add_argument("--bpe-lines", type=int, default=50_000, help="lines to learn BPE codes on")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chain", choices=("tokenize", "xlm"), default="tokenize",
                    help="tokenize: Moses tokenizer only (default); xlm: + punctuation normalisation")
    ap.add_argument("--keep", type=Path, help="keep inputs/outputs in this directory")
    args = ap.parse_args(argv)

    tmp_ctx = tempfile.TemporaryDirectory(prefix="bench_preprocess_")
    tmp = args.keep or Path(tmp_ctx.name)
    tmp.mkdir(parents=True, exist_ok=True)
    inp = tmp / "input.txt"
    if args.input:
        with open(args.input, encoding="utf-8") as fi, open(inp, "w", encoding="utf-8") as fo:
            for i, line in enumerate(fi):
                if i >= args.lines:
                    break
                fo.write(line.rstrip("\n") + "\n")
    else:
        inp.write_text("".join(l + "\n" for l in english_like_lines(args.lines, args.seed)), encoding="utf-8")
    n = sum(1 for _ in open(inp, "rb"))

    codes = tmp / "codes"
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    head = io.StringIO("".join(l for _, l in zip(range(args.bpe_lines), open(inp, encoding="utf-8"))))
    with open(codes, "w", encoding="utf-8") as fo:
        learn_bpe(head, fo, args.merges)
    print(f"learned {args.merges} BPE merges on {min(n, args.bpe_lines)} lines in {time.perf_counter() - t0:.1f}s")

    normalize = args.chain == "xlm"
    t_ref, c_ref = run_reference(inp, codes, tmp / "ref.out", args.lang, normalize)
    t_ours, c_ours = run_ours(inp, codes, tmp / "ours.out", args.lang, args.workers, tmp, normalize)
    same = (tmp / "ref.out").read_bytes() == (tmp / "ours.out").read_bytes()
    print(f"lines: {n}  chain: {args.chain}  cpus: {os.cpu_count()}  workers: {args.workers}  "
          f"load avg before: {load0:.1f}")
    print(f"reference (sacremoses CLI | subword-nmt apply-bpe): {t_ref:.1f}s wall  {n / t_ref:,.0f} lines/s  "
          f"cpu {c_ref:.1f}s")
    print(f"ours (sharded, cached Moses + cached BPE):        {t_ours:.1f}s wall  {n / t_ours:,.0f} lines/s  "
          f"cpu {c_ours:.1f}s")
    print(f"speed-up: {t_ref / t_ours:.2f}x (target >= 3x)")
    print(f"outputs identical: {same}")
    tmp_ctx.cleanup()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
