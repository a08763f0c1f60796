#!/usr/bin/env bash
# Start/stop a throw-away one-machine SLURM (slurm-wlm + munge; installed with apt-get if
# missing) for trying the SLURM profile by hand. Needs root. Everything lives in DIR; stop ends
# the daemons started there (by their pid files) and every process their jobs started (job steps
# included), nothing else.
#   scripts/slurm_cluster.sh start /tmp/xling-slurm [--gpus 2] [--cpus 8]   # prints: export SLURM_CONF=...
#   eval "$(scripts/slurm_cluster.sh start /tmp/xling-slurm)"
#   snakemake --profile profiles/slurm --profile profiles/slurm-test ...
#   scripts/slurm_cluster.sh stop /tmp/xling-slurm
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
# The harness is test support (tests/support/local_slurm.py), imported as support.local_slurm.
export PYTHONPATH="$PWD/tests${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m support.local_slurm "$@"
