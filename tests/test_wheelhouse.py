"""The offline install of a GPU node (scripts/wheelhouse.py, scripts/install_offline.sh): what a
wheelhouse holds, and (slow) that one built for this machine's Python installs into a fresh venv
with no index, compiling fairseq's extensions against a torch that is not replaced."""

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import wheelhouse  # noqa: E402


def test_fairseq_is_the_release_bootstrap_installs():
    assert wheelhouse.FAIRSEQ in (ROOT / "scripts" / "bootstrap.sh").read_text()


def test_what_fairseq_needs_is_among_the_projects_requirements():
    """fairseq's own requirements but torch's stack, as its installed metadata states them."""
    stated = {wheelhouse.requirement_name(r) for r in md.requires("fairseq-fixed") or [] if "extra ==" not in r}
    assert wheelhouse.FAIRSEQ_NEEDS == stated - wheelhouse.NEVER
    names = {wheelhouse.requirement_name(s) for s in wheelhouse.project_requirements([])}
    assert wheelhouse.FAIRSEQ_NEEDS <= names, wheelhouse.FAIRSEQ_NEEDS - names


def test_requirements_are_the_projects_pins_without_torch():
    specs = wheelhouse.project_requirements(["test"])
    names = {wheelhouse.requirement_name(s) for s in specs}
    assert "torch" not in names and {"transformers", "snakemake", "pytest", "psutil"} <= names
    assert "numpy==2.4.6" in specs  # the pins travel as they are


def test_skip_file_reads_pip_freeze_and_plain_names(tmp_path):
    skip = tmp_path / "node.txt"
    skip.write_text("# the node's own\nNumPy==2.5.2\ntorch @ file:///x.whl\nhuggingface_hub\n\n")
    assert wheelhouse.read_skip(skip) == {"numpy", "torch", "huggingface-hub"}


@pytest.mark.parametrize("args,message", [(["--python", "3.12.1"], "expected a version like 3.12"),
                                          (["--only", "nonexistent-package"], "not requirements of the project")])
def test_bad_arguments_are_refused_before_any_download(args, message, capsys, tmp_path):
    with pytest.raises(SystemExit):
        wheelhouse.main([*args, "--out", str(tmp_path / "wh")])
    assert message in capsys.readouterr().err and not (tmp_path / "wh").exists()


def test_fairseq_comes_as_its_prebuilt_wheel_where_the_index_has_one(tmp_path, monkeypatch):
    """A wheel for the target (0.12.3.1 has one for Python 3.12): taken, and no source fetched;
    none (other Pythons): its source, for the node to compile."""
    calls = []

    def fake_pip(args, python=sys.executable):
        calls.append(args)
        dest = Path(args[args.index("-d") + 1])
        binary = "--only-binary=:all:" in args
        if binary and "--python-version" in args and args[args.index("--python-version") + 1] == "3.12":
            (dest / "fairseq_fixed-0.12.3.1-cp312-cp312-manylinux_2_28_x86_64.whl").write_bytes(b"")
            return subprocess.CompletedProcess(args, 0, "", "")
        if binary:
            return subprocess.CompletedProcess(args, 1, "", "No matching distribution found for fairseq-fixed")
        (dest / "fairseq-fixed-0.12.3.1.tar.gz").write_bytes(b"")
        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(wheelhouse, "pip", fake_pip)
    for py, made in (("3.12", "fairseq_fixed-0.12.3.1-cp312-cp312-manylinux_2_28_x86_64.whl"),
                     ("3.11", "fairseq-fixed-0.12.3.1.tar.gz")):
        out = tmp_path / py
        out.mkdir()
        calls.clear()
        how = wheelhouse.build_fairseq(out, None, py, wheelhouse.PLATFORMS)
        assert [p.name for p in out.iterdir()] == [made]
        assert how.startswith("prebuilt wheel" if py == "3.12" else "source"), how
        assert len(calls) == (1 if py == "3.12" else 2)  # the source only where no wheel was found


def _node_python(root: Path) -> Path:
    """A 'GPU node' Python: a venv whose site-packages hold torch and what torch needs (links into
    this environment), nothing else, as a node's torch image would."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = Path(subprocess.run([str(root / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    todo, seen = ["torch"], set()
    while todo:
        dist = md.distribution(todo.pop())
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if name in seen:
            continue
        seen.add(name)
        for top in {f.parts[0] for f in dist.files or [] if not f.parts[0].startswith("..")}:
            target = Path(dist.locate_file(top))
            if target.exists() and not (site / top).exists() and top != "bin":
                (site / top).symlink_to(target)
        todo += [re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in dist.requires or [] if "extra ==" not in r]
    return root / "bin" / "python"


@pytest.mark.slow
def test_a_wheelhouse_installs_with_no_index_and_keeps_the_nodes_torch(tmp_path):
    """For this machine's Python: a subset of the requirements (a pure-Python wheel, fairseq and
    all it needs, which makes pip build a source-only dependency) to keep CI's time; the rest
    are downloaded the same way. The install runs with every PIP_* setting of this machine
    removed and no index."""
    wh = tmp_path / "wh"
    record = wheelhouse.main(["--only", "conllu", "fairseq-fixed", "--out", str(wh)])
    assert record["python"] == "%d.%d" % sys.version_info[:2]
    files = {p.name for p in wh.iterdir()}
    assert not any(re.match(r"(torch|nvidia)[-_]", f) for f in files), files
    assert any(f.startswith(("fairseq-fixed-", "fairseq_fixed-")) and f.endswith(".tar.gz") for f in files)
    assert "conllu==6.0.0" in (wh / "requirements.txt").read_text().split()
    assert json.loads((wh / "wheelhouse.json").read_text())["requirements"] == record["requirements"]

    node = _node_python(tmp_path / "node")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    # fairseq's extensions compiled unoptimised: what is checked is that they build against the
    # node's torch and import (the default, -O3, adds some 40 s to the test's 95 s)
    env["CFLAGS"] = "-O0"
    venv = tmp_path / "venv"
    got = subprocess.run(["bash", str(ROOT / "scripts" / "install_offline.sh"), str(wh), str(venv)],
                         env={**env, "PYTHON": str(node)}, capture_output=True, text=True, cwd=ROOT)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "installed offline" in got.stdout
    assert (venv / ".xling-installed").exists()  # `make test-gpu VENV=<venv>` installs nothing more
    probe = ("import torch, fairseq, conllu, xling.pretrain.names; "
             "from fairseq.data import data_utils_fast, token_block_utils_fast; "
             "print(torch.__file__); print(fairseq.__file__)")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    torch_file, fairseq_file = out.stdout.split()
    # torch is the node's (reached through its site-packages), fairseq was built into the venv
    assert str(tmp_path / "node") in torch_file and str(venv) in fairseq_file
