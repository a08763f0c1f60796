"""Raw text from the downloads: Wikipedia XML dumps (WikiExtractor) and CC-100 ``.txt.xz`` files.

Output: one paragraph/line of plain text per line, no empty lines (as XLM's get-data-wiki.sh).
Both read and write streaming.
"""

from __future__ import annotations

import bz2
import lzma
import re
import subprocess
import sys
from pathlib import Path
from typing import IO, Collection, Iterable, Iterator

from xling.errors import InputError
from xling.io import atomic_write

# Lines that are wiki markup WikiExtractor left behind (table rows, unexpanded templates/links,
# stray tags); they carry no sentence.
_MARKUP_LINE = re.compile(r"^(\{\||\|\}|\|-|\||!|\{\{|\}\}|\[\[|\]\]|__[A-Z]+__$|<[^<>]*>$)")
WIKI_DROPS = ("titles", "markup")  # what may be dropped besides XLM's doc tags and empty lines


def clean_wiki_lines(lines: Iterable[str], drop: Collection[str] = ()) -> Iterator[str]:
    """WikiExtractor ``<doc>`` output -> text lines, stripped.

    Always dropped, as XLM's get-data-wiki.sh (``sed "/^\\s*$/d" | grep -v "^<doc id=" | grep -v
    "</doc>$"``): empty lines and the doc tags. ``drop`` may add "titles" (the article title
    WikiExtractor prints after each ``<doc>``) and "markup" (lines of wiki markup it left)."""
    unknown = set(drop) - set(WIKI_DROPS)
    if unknown:
        raise ValueError(f"unknown wiki line kind(s) to drop {sorted(unknown)}; expected some of {WIKI_DROPS}")
    titles, markup = "titles" in drop, "markup" in drop
    title_next = False
    for raw in lines:
        text = raw.rstrip("\r\n")
        line = text.strip()
        if not line:
            continue
        if text.startswith("<doc id="):
            title_next = titles  # WikiExtractor prints the article title right after <doc ...>
            continue
        if text.endswith("</doc>"):
            continue
        if title_next:
            title_next = False
            continue
        if markup and _MARKUP_LINE.match(line):
            continue
        yield line


def check_mediawiki_dump(path: str | Path) -> None:
    """Raise InputError unless ``path`` is a bzip2 MediaWiki XML export."""
    try:
        with bz2.open(path, "rb") as fh:
            head = fh.read(4096)
    except (OSError, EOFError) as e:
        raise InputError(path, None, "a bzip2-compressed MediaWiki XML dump", str(e)) from None
    text = head.decode("utf-8", errors="replace")
    if "<mediawiki" not in text:
        first = text.lstrip().split("\n", 1)[0]
        raise InputError(path, 1, "a MediaWiki XML export starting with <mediawiki ...>", first)


def extract_wiki(dump: str | Path, out: str | Path, processes: int = 1, drop: Collection[str] = ()) -> int:
    """Run WikiExtractor on ``dump`` and write its text lines to ``out`` (``drop``: as
    ``clean_wiki_lines``; none, as XLM). Returns lines written."""
    check_mediawiki_dump(dump)
    cmd = [sys.executable, "-m", "wikiextractor.WikiExtractor", str(dump), "-o", "-",
           "--processes", str(max(1, processes)), "-q"]
    n = 0
    with atomic_write(out) as fo:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = proc.stdout, proc.stderr
        assert stdout is not None and stderr is not None  # both are pipes
        try:
            lines = (b.decode("utf-8", errors="replace") for b in stdout)
            for line in clean_wiki_lines(lines, drop):
                fo.write(line + "\n")
                n += 1
            stdout.close()
            err = stderr.read().decode("utf-8", errors="replace")
            rc = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if rc != 0:
            raise RuntimeError(f"WikiExtractor failed on {dump} (exit {rc}): {err[-2000:]}")
        if n == 0:  # a truncated or mis-formatted dump; better to stop here than train on nothing
            raise InputError(dump, None, "a MediaWiki dump with article text (one XML tag a line, "
                             "as Wikimedia writes them)", "no text extracted")
    return n


def read_utf8_lines(path: str | Path, fh: IO[bytes]) -> Iterator[str]:
    """Decode lines strictly; bad bytes -> InputError naming file and (1-based) line."""
    for i, raw in enumerate(fh, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(path, i, "UTF-8 text", repr(raw[max(0, e.start - 20): e.end + 20])) from None


def open_bytes(path: str | Path) -> IO[bytes]:
    """Open plain, .xz or .bz2 files as a binary stream."""
    path = str(path)
    if path.endswith(".xz"):
        return lzma.open(path, "rb")
    if path.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def extract_cc(src: str | Path, out: str | Path) -> int:
    """CC-100 file (documents separated by empty lines) -> non-empty stripped lines."""
    n = 0
    with open_bytes(src) as fh, atomic_write(out) as fo:
        try:
            for line in read_utf8_lines(src, fh):
                line = line.strip()
                if line:
                    fo.write(line + "\n")
                    n += 1
        except (lzma.LZMAError, EOFError, OSError) as e:
            raise InputError(src, None, "an xz-compressed CC-100 text file", str(e)) from None
    return n
