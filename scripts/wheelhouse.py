"""Build a wheelhouse: every package the pipeline needs, as files, for a GPU node without internet.

Run where a package index is reachable; copy the folder to the node; install there with
scripts/install_offline.sh (``pip install --no-index --find-links``). See docs/cluster.md.

    python scripts/wheelhouse.py --python 3.12                       # -> wheelhouse/py3.12
    python scripts/wheelhouse.py --python 3.12 --interpreter /usr/bin/python3.12   # fairseq built here too
    python scripts/wheelhouse.py --python 3.12 --only fairseq-fixed seqeval --skip-file node.txt --out .whl

What it holds:
* the pinned requirements of pyproject.toml (and its ``test`` extra) with their dependencies, as
  wheels for the target Python and platform (``pip download --only-binary :all: --python-version
  --platform``); torch is not among them: the node's own CUDA build is used and never replaced;
* packages published only as source: pure-Python ones built into wheels here, compiled ones built
  by ``--interpreter`` or else carried as source for install_offline.sh to compile on the node;
* fairseq-fixed: its prebuilt wheel where the index has one for the target (0.12.3.1: Python 3.12,
  manylinux_2_28 x86-64; its Cython data utilities are built against numpy 2, and its extensions
  linked against the torch of its build, libnat and libbase, are imported by no code path of the
  pipeline), else its source archive, and the wheel ``--interpreter`` builds from it when it names a
  Python of the target version with torch, Cython and numpy (otherwise install_offline.sh builds it
  on the node, offline, with the node's Python and torch);
* ``requirements.txt`` (what install_offline.sh installs) and ``wheelhouse.json`` (how it was made).

``--skip-file``: names (one per line, ``name==version`` or ``pip list --format freeze`` output) the
node already has; their wheels are left out and their pins dropped, so the node keeps its own.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the fairseq release scripts/bootstrap.sh installs (tests/test_wheelhouse.py checks they agree)
FAIRSEQ = "fairseq-fixed==0.12.3.1"
# fairseq-fixed's requirements but torch and torchaudio (it is installed --no-deps: no torchaudio
# release matches our torch, and the text paths never import it); pyproject.toml lists each of them
# (tests/test_wheelhouse.py checks both)
FAIRSEQ_NEEDS = {"cffi", "cython", "hydra-core", "omegaconf", "regex", "sacrebleu", "bitarray", "scikit-learn",
                 "packaging", "numpy", "tqdm"}
# never in a wheelhouse: the node's torch stack is its own CUDA build
NEVER = {"torch", "torchvision", "torchaudio", "triton"}
# fairseq's build needs (built without isolation, against the installed torch); xling's own are
# pyproject's build-system requirements (a venv's bundled setuptools may be too old for them)
BUILD_NEEDS = ["cython", "numpy"]
# manylinux tags pip may pick for an x86-64 Linux node (it matches each tag exactly)
PLATFORMS = ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_24_x86_64", "manylinux_2_27_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64",
             "manylinux1_x86_64", "linux_x86_64"]
_NO_MATCH = re.compile(r"No matching distribution found for (\S+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    return canonical(re.split(r"[<>=!~;\[ ]", spec.strip(), maxsplit=1)[0])


def build_requirements() -> list[str]:
    return list(tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]) + BUILD_NEEDS


def project_requirements(extras: list[str]) -> list[str]:
    """pyproject.toml's dependencies and the named extras, torch's stack left out."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra in extras:
        specs += project["optional-dependencies"][extra]
    return [s for s in specs if requirement_name(s) not in NEVER]


def read_skip(path: Path | None) -> set[str]:
    if path is None:
        return set()
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(requirement_name(line))
    return names


def pip(args: list[str], python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True)


def target_args(py: str, platforms: list[str]) -> list[str]:
    major, minor = py.split(".")
    return ["--only-binary=:all:", "--python-version", py, "--implementation", "cp", "--abi", f"cp{major}{minor}",
            "--abi", "abi3", "--abi", "none", *[a for p in platforms for a in ("--platform", p)]]


def fetch_source(spec: str, dest: Path) -> Path:
    """The source archive of ``spec`` (pip prepares its metadata: in an isolated build, or failing
    that with this environment's build tools, as a compiled package's may need numpy to say it)."""
    for isolation in ([], ["--no-build-isolation"]):
        got = pip(["download", "--no-deps", "--no-binary=:all:", *isolation, "-d", str(dest), spec])
        if got.returncode == 0:
            return next(p for p in dest.iterdir() if not p.name.endswith(".whl"))
    raise RuntimeError(f"{spec}: no wheel for the target and its source cannot be fetched:\n{got.stderr[-2000:]}")


def source_package(spec: str, out: Path, work: Path, interpreter: str | None) -> str:
    """A package published only as source: built into a wheel here when it is pure Python; a
    compiled one built by ``interpreter`` (the target's) when given, else its source kept for
    install_offline.sh to compile on the node. Returns which of these it was."""
    src = fetch_source(spec, work / canonical(spec))
    wheels = work / f"{canonical(spec)}-wheels"
    built = pip(["wheel", "--no-deps", "-w", str(wheels), str(src)])
    made = list(wheels.glob("*.whl")) if built.returncode == 0 else []
    if made and all(w.name.endswith("-none-any.whl") for w in made):
        for w in made:
            shutil.move(str(w), out / w.name)
        return "wheel built here (pure Python)"
    if interpreter:
        built = pip(["wheel", "--no-deps", "-w", str(out), str(src)], python=interpreter)
        if built.returncode != 0:
            raise RuntimeError(f"{spec} did not build with {interpreter}:\n{built.stderr[-2000:]}")
        return f"wheel built with {interpreter}"
    shutil.copy(src, out / src.name)
    return "source, compiled on the node"


def download_wheels(specs: list[str], out: Path, py: str, platforms: list[str], work: Path,
                    interpreter: str | None) -> dict[str, str]:
    """``specs`` and their dependencies as wheels for the target (with the source of those that
    only the node can build); returns what was done for each package published only as source."""
    done: dict[str, str] = {}
    specs = list(specs)
    while True:
        got = pip(["download", "-d", str(out), "--find-links", str(out), *target_args(py, platforms), *specs])
        if got.returncode == 0:
            return done
        missing = _NO_MATCH.search(got.stderr)
        if not missing or missing.group(1) in done:
            raise RuntimeError(f"pip download failed for Python {py}:\n{got.stderr[-3000:]}")
        spec = missing.group(1)
        done[spec] = source_package(spec, out, work, interpreter)
        if done[spec].startswith("source"):
            # pip download takes no source for the target: resolve the rest without it (its own
            # needs are the node's to meet, from this wheelhouse or its Python)
            if spec not in specs:
                raise RuntimeError(f"{spec} (needed by another requirement) compiles code and has no wheel for "
                                   f"Python {py}: give --interpreter, a Python {py} to build it with")
            specs.remove(spec)


def build_fairseq(out: Path, interpreter: str | None, py: str, platforms: list[str]) -> str:
    """fairseq-fixed in the wheelhouse: its prebuilt wheel for the target where the index has one;
    else its source, and its wheel built by ``interpreter`` if given."""
    got = pip(["download", "--no-deps", "-d", str(out), *target_args(py, platforms), FAIRSEQ])
    if got.returncode == 0:
        return "prebuilt wheel (nothing compiled on the node)"
    # its setup.py imports torch even to tell its metadata: no isolated build (this Python has torch)
    got = pip(["download", "--no-deps", "--no-binary=:all:", "--no-build-isolation", "-d", str(out), FAIRSEQ])
    if got.returncode != 0:
        raise RuntimeError(f"{FAIRSEQ}: source not downloadable:\n{got.stderr[-2000:]}")
    if not interpreter:
        return "source (built on the node by scripts/install_offline.sh)"
    check = "import sys, torch, Cython, numpy; print('%d.%d' % sys.version_info[:2])"
    probe = subprocess.run([interpreter, "-c", check], capture_output=True, text=True)
    if probe.returncode != 0:
        raise RuntimeError(f"{interpreter} cannot build fairseq: it needs torch, Cython and numpy importable "
                           f"({probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else 'not runnable'})")
    if probe.stdout.strip() != py:
        raise RuntimeError(f"{interpreter} is Python {probe.stdout.strip()}, not the target {py}")
    sdist = next(p for p in out.iterdir() if canonical(p.name).startswith("fairseq-fixed") and not p.suffix == ".whl")
    built = pip(["wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(sdist)], python=interpreter)
    if built.returncode != 0:
        raise RuntimeError(f"fairseq did not build with {interpreter}:\n{built.stderr[-3000:]}")
    return f"wheel built with {interpreter}"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default="%d.%d" % sys.version_info[:2], help="target Python version, e.g. 3.12")
    ap.add_argument("--out", type=Path, help="default: wheelhouse/py<version>")
    ap.add_argument("--interpreter", help="a Python of the target version with torch: builds fairseq's wheel")
    ap.add_argument("--platform", action="append", help="wheel platform tags (default: x86-64 manylinux)")
    ap.add_argument("--extras", nargs="*", default=["test"], help="pyproject extras to include")
    ap.add_argument("--only", nargs="+", help="just these requirements (names from pyproject or fairseq-fixed)")
    ap.add_argument("--skip-file", type=Path, help="packages the node already has (pip list --format freeze)")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"3\.\d+", args.python):
        ap.error(f"--python: expected a version like 3.12, got {args.python!r}")
    out = (args.out or REPO / "wheelhouse" / f"py{args.python}").resolve()
    platforms = args.platform or PLATFORMS
    skip = read_skip(args.skip_file)
    specs = project_requirements(args.extras) + build_requirements()
    if args.only:
        wanted = {canonical(n) for n in args.only}
        unknown = wanted - {requirement_name(s) for s in specs} - {requirement_name(FAIRSEQ)}
        if unknown:
            ap.error(f"--only: not requirements of the project: {sorted(unknown)}")
        wanted |= {requirement_name(b) for b in build_requirements()}
        specs = [s for s in specs if requirement_name(s) in wanted]
    with_fairseq = not args.only or requirement_name(FAIRSEQ) in {canonical(n) for n in args.only}
    if with_fairseq:
        specs += [s for s in project_requirements([]) if requirement_name(s) in FAIRSEQ_NEEDS]
    # one spec per package, the pinned one where there are two; the node's own packages: no pin (it
    # keeps its version), no wheel
    by_name: dict[str, str] = {}
    for spec in specs:
        name = requirement_name(spec)
        if name in skip:
            by_name[name] = name
        elif by_name.get(name, name) == name:
            by_name[name] = spec
    specs = list(by_name.values())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        built = download_wheels(specs, out, args.python, platforms, Path(work), args.interpreter)
    fairseq = build_fairseq(out, args.interpreter, args.python, platforms) if with_fairseq else None
    dropped = []
    for wheel in out.glob("*.whl"):
        name = canonical(wheel.name.split("-")[0])
        if name in NEVER or name in skip or name.startswith("nvidia-"):
            wheel.unlink()
            dropped.append(wheel.name)
    requirements = [s for s in specs if requirement_name(s) not in skip]
    (out / "requirements.txt").write_text("\n".join(requirements) + "\n")
    record = {"python": args.python, "platforms": platforms, "requirements": requirements, "source_only": built,
              "fairseq": fairseq, "skipped_as_on_the_node": sorted(skip), "dropped": sorted(dropped),
              "size_mb": round(sum(p.stat().st_size for p in out.iterdir()) / 2**20, 1)}
    (out / "wheelhouse.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{out}: {len(list(out.iterdir())) - 2} files, {record['size_mb']} MB; fairseq: {fairseq}")
    return record


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as exc:
        sys.exit(f"wheelhouse: {exc}")
