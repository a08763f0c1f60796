"""Word alignment with fast_align (Dyer et al. 2013), as paper Section 5.1.2 obtains its word pairs:
fast_align forward and reverse over tokenised parallel sentences, symmetrised with
``atools -c grow-diag-final-and``, then only the one-to-one links kept.

fast_align is on neither PyPI nor Debian: ``build_fast_align`` compiles its source release (a
``git archive`` tarball of github.com/clab/fast_align) with cmake and the system's C++ compiler.
The alternative directional aligner is eflomal (Östling & Tiedemann 2016, on PyPI): it replaces
fast_align's two runs, and its links are symmetrised by the same ``atools``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Sequence

from xling.download.extract import safe_extract
from xling.errors import InputError
from xling.io import atomic_path

Links = list[tuple[int, int]]
TOOLS = ("fast_align", "atools")
ALIGNERS = ("fast_align", "eflomal")


def _run(cmd: list[str], what: str, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {res.returncode}): {' '.join(cmd)}\n{res.stderr[-3000:]}")
    return res


def find_cmake() -> str | None:
    """cmake on PATH, or the one pip installs beside the interpreter (not always on PATH)."""
    return shutil.which("cmake") or shutil.which("cmake", path=str(Path(sys.executable).parent))


def build_fast_align(tarball: Path, dest: Path, jobs: int = 1) -> dict[str, Path]:
    """Compile ``fast_align`` and ``atools`` from the source ``tarball`` into ``dest`` (each
    binary appears there whole, once both are built). Needs cmake and a C++11 compiler."""
    tarball, dest = Path(tarball), Path(dest)
    cmake = find_cmake()
    if cmake is None or shutil.which("make") is None:
        raise RuntimeError("building fast_align needs cmake and make (pip install cmake; apt-get install g++ make)")
    with tempfile.TemporaryDirectory(prefix="fast_align.") as tmp:
        src = safe_extract(tarball, Path(tmp) / "src")
        tops = [p for p in src.iterdir() if p.is_dir()]
        if len(tops) != 1 or not (tops[0] / "CMakeLists.txt").is_file():
            raise InputError(tarball, None, "a fast_align source archive with one top folder holding CMakeLists.txt",
                             ", ".join(sorted(p.name for p in src.iterdir())))
        build = Path(tmp) / "build"
        # its CMakeLists asks for cmake 2.8, which cmake 4 refuses without this policy floor
        _run([cmake, "-S", str(tops[0]), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
              "-DCMAKE_POLICY_VERSION_MINIMUM=3.5"], "cmake (fast_align)")
        _run([cmake, "--build", str(build), "--target", *TOOLS, "-j", str(max(1, jobs))], "building fast_align")
        dest.mkdir(parents=True, exist_ok=True)
        for tool in TOOLS:
            with atomic_path(dest / tool) as tmp_bin:
                shutil.copy2(build / tool, tmp_bin)
    return {tool: dest / tool for tool in TOOLS}


def parse_links(line: str, where: tuple[Path, int] | None = None) -> Links:
    """``"0-0 1-2"`` -> ``[(0, 0), (1, 2)]`` (source index, target index)."""
    out = []
    for item in line.split():
        a, sep, b = item.partition("-")
        if not sep or not a.isdigit() or not b.isdigit():
            path, n = where or (Path("<alignment>"), None)
            raise InputError(path, n, "links 'i-j' separated by spaces", line.strip()[:80])
        out.append((int(a), int(b)))
    return out


def one_to_one(links: Links) -> Links:
    """The links whose source word and target word each take part in no other link, sorted."""
    src, tgt = Counter(i for i, _ in links), Counter(j for _, j in links)
    return sorted({(i, j) for i, j in links if src[i] == 1 and tgt[j] == 1})


def _fast_align_directions(text: Path, fwd: Path, rev: Path, tools: dict[str, Path]) -> None:
    """fast_align's recommended ``-d -o -v``, forward then reverse, on a ``src ||| tgt`` file."""
    for path, extra in ((fwd, []), (rev, ["-r"])):
        res = _run([str(tools["fast_align"]), "-i", str(text), "-d", "-o", "-v", *extra], "fast_align")
        path.write_text(res.stdout, encoding="utf-8")


def _eflomal_directions(src: list[str], tgt: list[str], fwd: Path, rev: Path) -> None:
    """eflomal's default model (HMM + fertility, 3 samplers), both directions in one run. It seeds
    its sampler from /dev/urandom: two runs give slightly different links."""
    import eflomal  # only this aligner needs it
    eflomal.Aligner().align(src, tgt, links_filename_fwd=str(fwd), links_filename_rev=str(rev), quiet=True)


def align(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], tools: dict[str, Path],
          heuristic: str = "grow-diag-final-and", aligner: str = "fast_align") -> list[Links]:
    """Symmetrised links of each sentence pair (tokens): ``aligner`` (fast_align or eflomal)
    forward and reverse, then ``atools -c heuristic``. A pair with an empty side gets no links."""
    if len(src) != len(tgt):
        raise ValueError(f"align: {len(src)} source sentences but {len(tgt)} target sentences")
    if aligner not in ALIGNERS:
        raise ValueError(f"align: aligner must be one of {', '.join(ALIGNERS)}, got {aligner!r}")
    keep = [i for i, (s, t) in enumerate(zip(src, tgt)) if s and t]
    out: list[Links] = [[] for _ in src]
    if not keep:
        return out
    with tempfile.TemporaryDirectory(prefix="align.") as tmp:
        text, fwd, rev = (Path(tmp) / name for name in ("text", "fwd", "rev"))
        src_lines = [" ".join(src[i]) for i in keep]
        tgt_lines = [" ".join(tgt[i]) for i in keep]
        if aligner == "fast_align":
            with open(text, "w", encoding="utf-8") as fh:
                fh.writelines(f"{a} ||| {b}\n" for a, b in zip(src_lines, tgt_lines))
            _fast_align_directions(text, fwd, rev, tools)
        else:
            _eflomal_directions(src_lines, tgt_lines, fwd, rev)
        sym = _run([str(tools["atools"]), "-i", str(fwd), "-j", str(rev), "-c", heuristic], "atools").stdout
    lines = sym.splitlines()
    if len(lines) != len(keep):
        raise RuntimeError(f"atools returned {len(lines)} alignments for {len(keep)} sentence pairs")
    for n, (i, line) in enumerate(zip(keep, lines), 1):
        out[i] = parse_links(line, (Path("atools output"), n))
    return out
