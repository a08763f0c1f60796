#!/usr/bin/env bash
# Wheels for a GPU machine that reaches no index and already has Python 3.12 with a CUDA torch and
# the packages listed in scripts/gpu_node_packages.txt (its image): what the pipeline needs beyond
# them, in a folder the repository ignores, small enough to travel with a copy of the repository.
#
#   scripts/gpu_node_wheels.sh [tests|demo] [OUT]      # default: tests, .whl
#
#   tests: what `pytest -m gpu tests/test_gpu.py tests/test_finetune.py` imports (fairseq, faiss, ...)
#   demo:  everything else `make demo` / `make demo-full` needs (Snakemake, the tokenisers, ...), in
#          another folder (.whl-demo: bench/gpu_check.sh's second call carries it; the two together
#          are over the 64 MiB a call carries)
#
# Then, on the machine, in the repository copy (one command):
#   PYTHON=python3 scripts/install_offline.sh .whl /tmp/venv && . /tmp/venv/bin/activate
# (fairseq comes as its prebuilt 3.12 wheel: nothing is compiled there), or, quicker and what
# bench/gpu_check.sh does, unpacked beside the machine's own packages:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=src:/tmp/site
set -euo pipefail
cd "$(dirname "$0")/.."
group=${1:-tests}
out=${2:-.whl}
leave=()  # dependencies left out although the node lacks them: nothing the group runs imports them
case "$group" in
  tests) only=(fairseq-fixed faiss-cpu jsonschema sacremoses tensorboardX seqeval conllu subword-nmt pyyaml psutil
               pytest pytest-timeout) ;;
  # not gensim (Liu et al.'s word2vec) nor pythainlp (Thai): 50 MB that make demo / demo-full never import;
  # nor pulp (16 MB, its solver binaries): only Snakemake's ILP scheduler imports it, and without it
  # Snakemake schedules greedily, as the local profile asks anyway
  demo) only=(snakemake snakemake-executor-plugin-slurm pandas jieba wikiextractor fasttext-numpy2 eflomal scipy
              matplotlib tqdm)
        leave=(pulp) ;;
  *) echo "gpu_node_wheels: unknown group $group (tests or demo)" >&2; exit 2 ;;
esac
# the folder travels with the working tree but is never committed
if [[ -d .git || -f .git ]]; then
  exclude=$(git rev-parse --git-path info/exclude)
  mkdir -p "$(dirname "$exclude")"
  grep -qxF "/${out#./}/" "$exclude" 2>/dev/null || echo "/${out#./}/" >> "$exclude"
fi
python=${WHEELHOUSE_PYTHON:-.venv/bin/python}
[[ -x "$python" ]] || python=python3
skip=$(mktemp)
trap 'rm -f "$skip"' EXIT
cat scripts/gpu_node_packages.txt > "$skip"
printf '%s\n' ${leave[@]+"${leave[@]}"} >> "$skip"
"$python" scripts/wheelhouse.py --python 3.12 --out "$out" --only "${only[@]}" --skip-file "$skip"
size=$(du -sm "$out" | cut -f1)
echo "$out: ${size} MiB for group $group"
if (( size > 56 )); then
  echo "gpu_node_wheels: over 56 MiB: a copy of the repository with it may not travel; build fewer names" >&2
fi
