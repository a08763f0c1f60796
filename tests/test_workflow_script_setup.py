"""A rule's script runs the package of its own checkout: workflow/scripts/_setup.py puts that
checkout's src/ first, even when another xling (an editable install of another clone, a
PYTHONPATH) comes earlier on the job's path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from xling.config import REPO


def test_a_script_imports_its_own_checkout_s_package_before_any_other(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "workflow" / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "workflow" / "scripts" / "_setup.py", checkout / "workflow" / "scripts")
    for root, name in ((checkout / "src", "this checkout"), (tmp_path / "other", "another clone")):
        (root / "xling").mkdir(parents=True)
        (root / "xling" / "__init__.py").write_text(f"WHO = {name!r}\n")
    (checkout / "workflow" / "scripts" / "who.py").write_text(
        "from _setup import run_logged\n"
        "import xling\n"
        "open(snakemake.output[0], 'w').write(xling.WHO)\n")
    # as common.smk does: the Snakemake process itself imports _setup, so its src/ is on the path
    # Snakemake hands to every job, after the job's own site-packages
    (checkout / "Snakefile").write_text(
        "import sys\n"
        "sys.path.insert(0, workflow.basedir + '/workflow/scripts')\n"
        "import _setup\n\n"
        "rule who:\n    output: 'who.txt'\n    script: 'workflow/scripts/who.py'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "other")}  # another xling ahead of site-packages
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--directory", str(checkout),
                           "--snakefile", str(checkout / "Snakefile")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (checkout / "who.txt").read_text() == "this checkout"
