"""Word segmentation of languages written without spaces between words: Chinese with jieba (offline
default) or the Stanford segmenter (XLM's choice), Thai with pythainlp (XLM's tools/segment_th.py).

``segmenter(name, **kw)`` returns a callable ``str -> list[str]``; segmenters also offer
``segment_lines(lines) -> list[list[str]]`` for batches (the Stanford one starts Java once per
batch, so shards go through that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterable

STANFORD_MODELS = ("ctb", "pku")


class SegmenterUnavailable(RuntimeError):
    """The configured segmenter cannot run here (missing Java or segmenter files)."""


class JiebaSegmenter:
    """jieba's accurate mode (HMM on), whitespace tokens dropped."""

    def __init__(self):
        import jieba

        jieba.setLogLevel(60)  # silence the "Building prefix dict" banner in job logs
        self._tok = jieba.Tokenizer()
        self._tok.initialize()

    def __call__(self, text: str) -> list[str]:
        return [w for w in self._tok.cut(text, HMM=True) if w.strip()]

    def segment_lines(self, lines: Iterable[str]) -> list[list[str]]:
        return [self(line) for line in lines]


class PyThaiNLPSegmenter:
    """pythainlp's ``word_tokenize`` with its default engine, newmm, as XLM's tools/segment_th.py calls
    it; whitespace tokens dropped.

    newmm matches against the Thai dictionary inside the package: nothing is downloaded. With its
    default keep_whitespace=True a space of the text is a token of its own, which XLM's
    ``' '.join(...)`` turned into three spaces; dropping whitespace-only tokens leaves the same words
    with one space between them. The dictionary is pythainlp 5's, not 2019's, so a few word
    boundaries may differ from XLM's own files.
    """

    ENGINE = "newmm"

    def __init__(self):
        # read-only: pythainlp neither creates ~/pythainlp-data nor downloads into it (newmm needs
        # neither), so a job runs with an unwritable home or no network
        os.environ.setdefault("PYTHAINLP_READ_ONLY", "1")
        from pythainlp.tokenize import word_tokenize

        self._tokenize = word_tokenize

    def __call__(self, text: str) -> list[str]:
        return [w for w in self._tokenize(text, engine=self.ENGINE) if w.strip()]

    def segment_lines(self, lines: Iterable[str]) -> list[list[str]]:
        return [self(line) for line in lines]


def find_stanford_home(root: str | Path) -> Path:
    """The directory holding ``segment.sh`` under ``root`` (the extracted zip)."""
    root = Path(root)
    if (root / "segment.sh").is_file():
        return root
    found = sorted(root.glob("**/segment.sh")) if root.is_dir() else []
    if not found:
        raise SegmenterUnavailable(
            f"Stanford segmenter not found: no segment.sh under {root}. Download it (downloads."
            "stanford_segmenter) or set `segmenter: jieba` for this language in the config."
        )
    return found[0].parent


class StanfordSegmenter:
    """Runs ``segment.sh <model> <file> UTF-8 0`` (as XLM's tokenize.sh does) on a batch."""

    def __init__(self, home: str | Path, model: str | None, java: str = "java"):
        if model is None or model not in STANFORD_MODELS:
            raise ValueError(f"stanford model must be one of {STANFORD_MODELS}, got {model!r}")
        self.model = model
        found = shutil.which(java)
        if found is None:
            raise SegmenterUnavailable(
                f"Java ({java!r}) is not on PATH; the Stanford segmenter needs it. Install a JRE "
                "or set `segmenter: jieba` for this language in the config."
            )
        self.java = found
        self.home = find_stanford_home(home)

    def command(self, path: str | Path) -> list[str]:
        return ["bash", str(self.home / "segment.sh"), self.model, str(path), "UTF-8", "0"]

    def segment_lines(self, lines: Iterable[str]) -> list[list[str]]:
        lines = [" ".join(line.split()) for line in lines]  # the segmenter reads one line each
        with tempfile.TemporaryDirectory(prefix="stanford_seg_") as tmp:
            src = Path(tmp) / "in.txt"
            src.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            env = dict(os.environ, PATH=f"{Path(self.java).parent}{os.pathsep}{os.environ.get('PATH', '')}")
            proc = subprocess.run(self.command(src), capture_output=True, env=env, cwd=self.home)
        if proc.returncode != 0:
            raise SegmenterUnavailable(
                f"Stanford segmenter failed (exit {proc.returncode}): "
                f"{proc.stderr.decode('utf-8', 'replace')[-500:]}"
            )
        out = proc.stdout.decode("utf-8").split("\n")
        if out and out[-1] == "":
            out.pop()
        if len(out) != len(lines):
            raise SegmenterUnavailable(
                f"Stanford segmenter returned {len(out)} lines for {len(lines)} input lines"
            )
        return [o.split() for o in out]

    def __call__(self, text: str) -> list[str]:
        return self.segment_lines([text])[0]


def segmenter(name: str, **kw) -> Callable[[str], list[str]]:
    """``jieba`` | ``stanford`` (kw: ``home`` = segmenter directory, ``model`` = ctb|pku, the config's
    preprocess.stanford_model) | ``pythainlp`` (Thai)."""
    if name == "jieba":
        return JiebaSegmenter()
    if name == "pythainlp":
        return PyThaiNLPSegmenter()
    if name == "stanford":
        if "home" not in kw or kw["home"] is None:
            raise SegmenterUnavailable(
                "segmenter 'stanford' needs the segmenter directory (downloads.stanford_segmenter);"
                " set `segmenter: jieba` to segment offline"
            )
        return StanfordSegmenter(kw["home"], kw.get("model"), kw.get("java", "java"))
    raise ValueError(f"unknown segmenter {name!r} (expected jieba, stanford or pythainlp)")
