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

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from fairseq.data import Dictionary
from fairseq.tokenizer import tokenize_line

from xling.errors import InputError

SPLITS = ("train", "valid", "test")
PADDING_FACTOR = 8  # fairseq-preprocess' default


def language_dictionary(paths: Path | list[Path], workers: int = 1) -> Dictionary:
    """Token counts of one language's BPE text files as a fairseq Dictionary (specials first,
    then tokens by count, ties alphabetically; no padding)."""
    d = Dictionary()
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        Dictionary.add_file_to_dictionary(str(path), d, tokenize_line, max(1, workers))
    d.finalize(threshold=-1, nwords=-1, padding_factor=1)
    return d


def shared_dictionary(per_language: list[Dictionary]) -> Dictionary:
    shared = Dictionary()
    for d in per_language:
        shared.update(d)
    shared.finalize(threshold=-1, nwords=-1, padding_factor=PADDING_FACTOR)
    return shared


def _preprocess(dict_path: Path, files: dict[str, Path], lang: str, dest: Path, workers: int) -> None:
    """``files``: split -> BPE text, written as ``dest/<split>.{bin,idx}``."""
    cmd = [sys.executable, "-m", "fairseq_cli.preprocess", "--only-source", "--srcdict", str(dict_path),
           "--destdir", str(dest), "--workers", str(max(1, workers)), "--dataset-impl", "mmap"]
    for split, path in files.items():
        cmd += [f"--{split}pref", str(path)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"fairseq-preprocess failed for {lang} (exit {res.returncode}):\n{res.stderr[-4000:]}")


def variant_train(bpe_dir: Path, lang: str, variant: int) -> Path:
    """The BPE text of a code-switched copy of ``lang``'s training text (variant 0: the copy the
    codes were learnt on, ``<lang>.train.bpe``)."""
    return Path(bpe_dir) / (f"{lang}.train.bpe" if variant == 0 else f"{lang}.train.v{variant}.bpe")


def _require(path: Path, what: str) -> None:
    if not path.is_file():
        raise InputError(path, None, what, "no such file")


@contextlib.contextmanager
def _staging(out_dir: Path) -> Iterator[Path]:
    """A fresh folder inside ``out_dir`` to build outputs in, removed afterwards: what is moved
    into place from it is complete, and a failed run leaves nothing that looks finished."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".binarize.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _replace(built: Path, dest: Path) -> None:
    """Move a built file or folder over what ``dest`` held."""
    if dest.is_dir():
        shutil.rmtree(dest)
    os.replace(built, dest)


def binarize(bpe_dir: Path, out_dir: Path, languages: list[str], workers: int = 1,
             splits: tuple[str, ...] = SPLITS, variants: int = 1) -> dict:
    """Binarise `<lang>.<split>.bpe` of `bpe_dir` for every language into `out_dir`.

    ``variants`` > 1: the dictionaries also count the code-switched copies of the training text
    (``<lang>.train.v<k>.bpe``), which :func:`binarize_variant` writes with the same dictionary.
    Everything is built in a temporary folder inside `out_dir`, then moved into place, the shared
    dict.txt last, so a failed run leaves no complete-looking output."""
    bpe_dir, out_dir = Path(bpe_dir), Path(out_dir)
    for lang in languages:
        for split in splits:
            _require(bpe_dir / f"{lang}.{split}.bpe", f"the {split} BPE text of {lang} (bpe stage output)")
        for k in range(1, variants):
            _require(variant_train(bpe_dir, lang, k), f"the BPE text of code-switched copy {k} of {lang}")
    with _staging(out_dir) as tmp:
        per_lang = {lang: language_dictionary([variant_train(bpe_dir, lang, k) for k in range(variants)], workers)
                    for lang in languages}
        shared = shared_dictionary(list(per_lang.values()))
        shared.save(str(tmp / "dict.txt"))
        for lang, d in per_lang.items():
            d.save(str(tmp / f"dict.{lang}.txt"))
            _preprocess(tmp / "dict.txt", {split: bpe_dir / f"{lang}.{split}.bpe" for split in splits}, lang,
                        tmp / lang, workers)
            (tmp / lang / "dict.txt").unlink()  # fairseq-preprocess copies the dictionary; one is enough
            os.replace(tmp / lang / "preprocess.log", tmp / f"preprocess.{lang}.log")
        for lang in languages:
            for name in (lang, f"dict.{lang}.txt", f"preprocess.{lang}.log"):
                _replace(tmp / name, out_dir / name)
        _replace(tmp / "dict.txt", out_dir / "dict.txt")
    return {
        "dict_size": len(shared),
        "language_vocab": {lang: len(d) - d.nspecial for lang, d in per_lang.items()},
    }


def binarize_variant(dict_path: Path, bpe_dir: Path, languages: list[str], variant: int, out_dir: Path,
                     workers: int = 1) -> None:
    """Code-switched copy ``variant`` of the training text, binarised with the shared dictionary
    into ``out_dir/<lang>/train.{bin,idx}``: a data directory fairseq trains an epoch on (its
    dictionary and validation data come from the first directory of the data path)."""
    bpe_dir, out_dir = Path(bpe_dir), Path(out_dir)
    for lang in languages:
        _require(variant_train(bpe_dir, lang, variant), f"the BPE text of code-switched copy {variant} of {lang}")
    with _staging(out_dir) as tmp:
        for lang in languages:
            _preprocess(Path(dict_path), {"train": variant_train(bpe_dir, lang, variant)}, lang, tmp / lang, workers)
            (tmp / lang / "dict.txt").unlink()
            (tmp / lang / "preprocess.log").unlink()
        for lang in languages:
            _replace(tmp / lang, out_dir / lang)


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # no hard links on this file system
        shutil.copyfile(src, dst)


def alias_language(mono_dir: Path, lang: str, alias: str, out_dir: Path) -> None:
    """A two-language data directory whose languages ``lang`` and ``alias`` both read the
    monolingual ``mono_dir`` (hard links, no copy): Figure 7's bilingual en-en′ model is "trained
    on English data but with separate embeddings", one language id per copy."""
    mono_dir, out_dir = Path(mono_dir), Path(out_dir)
    _require(mono_dir / "dict.txt", f"the binarised monolingual {lang} data (binarize_mono output)")
    with _staging(out_dir) as tmp:
        for name in (lang, alias):
            (tmp / name).mkdir()
            for split in SPLITS:
                for ext in ("bin", "idx"):
                    _link(mono_dir / lang / f"{split}.{ext}", tmp / name / f"{split}.{ext}")
            _link(mono_dir / f"dict.{lang}.txt", tmp / f"dict.{name}.txt")
        for name in (lang, alias):
            _replace(tmp / name, out_dir / name)
            _replace(tmp / f"dict.{name}.txt", out_dir / f"dict.{name}.txt")
        _link(mono_dir / "dict.txt", tmp / "dict.txt")
        _replace(tmp / "dict.txt", out_dir / "dict.txt")
