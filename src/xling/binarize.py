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
import logging
import os
import shutil
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from fairseq import options
from fairseq.data import Dictionary
from fairseq.tokenizer import tokenize_line

from xling.errors import InputError

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
    """``files``: split -> BPE text, written as ``dest/<split>.{bin,idx}`` by fairseq-preprocess's
    own ``main``, run in this process: a subprocess per language cost a second fairseq import
    (~5 s) per language and job."""
    from fairseq_cli import preprocess

    argv = ["--only-source", "--srcdict", str(dict_path), "--destdir", str(dest),
            "--workers", str(max(1, workers)), "--dataset-impl", "mmap"]
    for split, path in files.items():
        argv += [f"--{split}pref", str(path)]
    args = options.get_preprocessing_parser().parse_args(argv)
    log = preprocess.logger
    before, level = set(log.handlers), log.level
    log.setLevel(logging.INFO)  # its statistics are INFO lines, whatever the caller's logging says
    try:
        preprocess.main(args)
    except Exception as e:
        raise RuntimeError(f"fairseq-preprocess failed for {lang}: {e}") from e
    finally:
        # main() attaches a handler for dest/preprocess.log and never removes it.
        for handler in set(log.handlers) - before:
            log.removeHandler(handler)
            handler.close()
        log.setLevel(level)


def _require(path: Path, what: str) -> None:
    if not Path(path).is_file():
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


def binarize(texts: Mapping[str, Mapping[str, Path]], out_dir: Path, workers: int = 1,
             copies: Mapping[str, Sequence[Path]] | None = None) -> dict:
    """Binarise the BPE ``texts`` (language -> split -> file; languages in language-id order) into
    ``out_dir``.

    ``copies``: language -> further code-switched copies of its training text, which the
    dictionaries also count and :func:`binarize_variant` writes with the same dictionary.
    Everything is built in a temporary folder inside `out_dir`, then moved into place, the shared
    dict.txt last, so a failed run leaves no complete-looking output."""
    out_dir, copies = Path(out_dir), copies or {}
    for lang, splits in texts.items():
        for split, path in splits.items():
            _require(path, f"the {split} BPE text of {lang} (bpe stage output)")
        for k, path in enumerate(copies.get(lang, ()), 1):
            _require(path, f"the BPE text of code-switched copy {k} of {lang}")
    with _staging(out_dir) as tmp:
        per_lang = {lang: language_dictionary([splits["train"], *copies.get(lang, ())], workers)
                    for lang, splits in texts.items()}
        shared = shared_dictionary(list(per_lang.values()))
        shared.save(str(tmp / "dict.txt"))
        for lang, d in per_lang.items():
            d.save(str(tmp / f"dict.{lang}.txt"))
            _preprocess(tmp / "dict.txt", dict(texts[lang]), lang, tmp / lang, workers)
            (tmp / lang / "dict.txt").unlink()  # fairseq-preprocess copies the dictionary; one is enough
            os.replace(tmp / lang / "preprocess.log", tmp / f"preprocess.{lang}.log")
        for lang in texts:
            for name in (lang, f"dict.{lang}.txt", f"preprocess.{lang}.log"):
                _replace(tmp / name, out_dir / name)
        _replace(tmp / "dict.txt", out_dir / "dict.txt")
    return {
        "dict_size": len(shared),
        "language_vocab": {lang: len(d) - d.nspecial for lang, d in per_lang.items()},
    }


def binarize_variant(dict_path: Path, texts: Mapping[str, Path], out_dir: Path, workers: int = 1) -> None:
    """A code-switched copy of the training text (language -> its BPE text), binarised with the
    shared dictionary into ``out_dir/<lang>/train.{bin,idx}``: a data directory fairseq trains an
    epoch on (its dictionary and validation data come from the first directory of the data path)."""
    out_dir = Path(out_dir)
    for lang, path in texts.items():
        _require(path, f"the BPE text of a code-switched copy of {lang}")
    with _staging(out_dir) as tmp:
        for lang, path in texts.items():
            _preprocess(Path(dict_path), {"train": Path(path)}, lang, tmp / lang, workers)
            (tmp / lang / "dict.txt").unlink()
            (tmp / lang / "preprocess.log").unlink()
        for lang in texts:
            _replace(tmp / lang, out_dir / lang)


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # no hard links on this file system
        shutil.copyfile(src, dst)


def alias_language(shared_dict: Path, lang_dict: Path, data: Sequence[Path], lang: str, alias: str,
                   out_dir: Path) -> None:
    """A two-language data directory whose languages ``lang`` and ``alias`` both read one
    language's binarised ``data`` files (hard links, no copy) with its dictionaries: Figure 7's
    bilingual en-en′ model is "trained on English data but with separate embeddings", one
    language id per copy. The dictionaries are copied: they are the rule's outputs, and a hard
    link would keep its source's modification time, older than the other inputs, which
    Snakemake takes for a stale output."""
    out_dir = Path(out_dir)
    for path in (shared_dict, lang_dict, *data):
        _require(path, f"the binarised monolingual {lang} data (binarize_mono output)")
    with _staging(out_dir) as tmp:
        for name in (lang, alias):
            (tmp / name).mkdir()
            for path in data:
                _link(Path(path), tmp / name / Path(path).name)
            shutil.copyfile(lang_dict, tmp / f"dict.{name}.txt")
        for name in (lang, alias):
            _replace(tmp / name, out_dir / name)
            _replace(tmp / f"dict.{name}.txt", out_dir / f"dict.{name}.txt")
        shutil.copyfile(shared_dict, tmp / "dict.txt")
        _replace(tmp / "dict.txt", out_dir / "dict.txt")
