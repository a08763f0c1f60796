#!/usr/bin/env bash
# Run by Snakemake after creating envs/fairseq.yaml (`--sdm conda`).
set -euo pipefail
python -m pip install --no-build-isolation --no-deps "fairseq-fixed==0.12.3.1"
