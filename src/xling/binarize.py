"""fairseq binarisation of a BPE directory: `R/bin/<setting>/<pair>/` (or `R/bin/mono/<lang>/`).

Layout, as fairseq's `multilingual_masked_lm` task reads it (every sub-folder of the data
directory is a language; `dict.txt` at the top is shared):

    dict.txt                      shared dictionary built from all languages' train BPE text
    dict.<lang>.txt               tokens seen in <lang>'s train text, with their counts there
    <lang>/{train,valid,test}.{bin,idx}
    preprocess.<lang>.log

The shared dictionary keeps every token (no threshold) and is padded to a multiple of 8 like
fairseq-preprocess does; the data itself is written by `fairseq-preprocess --only-source
--srcdict dict.txt`. The per-language files let pretraining restrict random replacement and
(with separate embeddings) the softmax to one language's tokens.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from fairseq.data import Dictionary
from fairseq.tokenizer import tokenize_line

from xling.errors import InputError

SPLITS = ("train", "valid", "test")
PADDING_FACTOR = 8  # fairseq-preprocess' default


def language_dictionary(path: Path, workers: int = 1) -> Dictionary:
    """Token counts of one BPE text file as a fairseq Dictionary (specials first, then tokens by
    count, ties alphabetically; no padding)."""
    d = Dictionary()
    Dictionary.add_file_to_dictionary(str(path), d, tokenize_line, max(1, workers))
    d.finalize(threshold=-1, nwords=-1, padding_factor=1)
    return d


def shared_dictionary(per_language: list[Dictionary]) -> Dictionary:
    shared = Dictionary()
    for d in per_language:
        shared.update(d)
    shared.finalize(threshold=-1, nwords=-1, padding_factor=PADDING_FACTOR)
    return shared


def _preprocess(dict_path: Path, bpe_dir: Path, lang: str, dest: Path, splits, workers: int) -> None:
    cmd = [sys.executable, "-m", "fairseq_cli.preprocess", "--only-source", "--srcdict", str(dict_path),
           "--destdir", str(dest), "--workers", str(max(1, workers)), "--dataset-impl", "mmap"]
    for split in splits:
        cmd += [f"--{split}pref", str(bpe_dir / f"{lang}.{split}.bpe")]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"fairseq-preprocess failed for {lang} (exit {res.returncode}):\n{res.stderr[-4000:]}")


def binarize(bpe_dir: Path, out_dir: Path, languages: list[str], workers: int = 1,
             splits: tuple[str, ...] = SPLITS) -> dict:
    """Binarise `<lang>.<split>.bpe` of `bpe_dir` for every language into `out_dir`.

    Everything is built in a temporary folder inside `out_dir`, then moved into place, the shared
    dict.txt last, so a failed run leaves no complete-looking output."""
    bpe_dir, out_dir = Path(bpe_dir), Path(out_dir)
    for lang in languages:
        for split in splits:
            p = bpe_dir / f"{lang}.{split}.bpe"
            if not p.is_file():
                raise InputError(p, None, f"the {split} BPE text of {lang} (bpe stage output)", "no such file")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".binarize.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        per_lang = {lang: language_dictionary(bpe_dir / f"{lang}.train.bpe", workers) for lang in languages}
        shared = shared_dictionary(list(per_lang.values()))
        shared.save(str(tmp / "dict.txt"))
        for lang, d in per_lang.items():
            d.save(str(tmp / f"dict.{lang}.txt"))
            _preprocess(tmp / "dict.txt", bpe_dir, lang, tmp / lang, splits, workers)
            (tmp / lang / "dict.txt").unlink()  # fairseq-preprocess copies the dictionary; one is enough
            os.replace(tmp / lang / "preprocess.log", tmp / f"preprocess.{lang}.log")
        for lang in languages:
            if (out_dir / lang).exists():
                shutil.rmtree(out_dir / lang)
            os.replace(tmp / lang, out_dir / lang)
            os.replace(tmp / f"dict.{lang}.txt", out_dir / f"dict.{lang}.txt")
            os.replace(tmp / f"preprocess.{lang}.log", out_dir / f"preprocess.{lang}.log")
        os.replace(tmp / "dict.txt", out_dir / "dict.txt")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "dict_size": len(shared),
        "language_vocab": {lang: len(d) - d.nspecial for lang, d in per_lang.items()},
    }
