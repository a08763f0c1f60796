#!/usr/bin/env bash
# Create .venv and install everything the pipeline and its tests need, from nothing.
# Idempotent: a complete venv (stamp file newer than pyproject.toml) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
stamp="$VENV/.xling-installed"
if [[ -f "$stamp" && "$stamp" -nt pyproject.toml && "$stamp" -nt scripts/bootstrap.sh ]]; then
  exit 0
fi
"$PY" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found %s" % sys.version' 
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
pip="$VENV/bin/python -m pip"
$pip install -q --upgrade pip setuptools wheel
# torch first, pinned, so nothing later resolves a (multi-GB) CUDA build of a newer release.
$pip install -q "torch==2.13.0" "numpy==2.4.6" cython
# fairseq-fixed builds C/Cython extensions against the torch above; --no-deps because its
# metadata requires torchaudio (no release for torch 2.13, never imported on our text paths);
# its other requirements are listed in pyproject.toml.
if ! "$VENV/bin/python" -c 'import fairseq' 2>/dev/null; then
  $pip install -q --no-build-isolation --no-deps "fairseq-fixed==0.12.3.1"
fi
$pip install -q -e ".[test,lint]"
touch "$stamp"
