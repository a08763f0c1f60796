#!/usr/bin/env bash
# Issue 27's GPU measurements: the pretraining step the GPU jobs run (bench/bench_pretrain.py: our
# fairseq step against the best plain PyTorch step of the same model, same batches, bf16,
# compiled) on the paper's model (8 x 768, 12 heads, FFN 3072, 256-token streams, ~80k
# vocabulary), with the shared anchor (pretrain_anchor.py) beside it in the same session, so every
# ratio is measured side by side on one GPU. Each part fits one device command (10 minutes);
# everything goes to $OUT (at most 8 files a call come back: each part writes few).
#
# Before the first run, in the repo root of the session's machine (the device has no registry and
# lacks fairseq, hydra, omegaconf, bitarray and jsonschema, which the benchmark imports; the
# anchor lives outside the repo):
#   mkdir -p .anchors && cp ../shared/tools/gpu-anchors/pretrain_anchor.py .anchors/
#   printf '/.anchors/\n/.whl/\n' >> .git/info/exclude     # unless .gitignore lists them already
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
#     fairseq-fixed==0.12.3.1 hydra-core==1.3.2 omegaconf==2.3.0 bitarray==3.12.3 jsonschema==4.26.0 \
#     jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
#   python3 -m pip wheel --no-deps -w .whl antlr4-python3-runtime==4.9.3   # an sdist only: a pure-Python wheel
# Then these calls, each with carry [".anchors", ".whl"] and timeout_s 600, in this order of
# priority (a part's first compile takes minutes on a fresh machine, seconds from a warm one's cache):
#   bash bench/gpu_pretrain.sh paper1 paper2   # the benchmark at batch 96, runs 1 and 2     (~8 min)
#   bash bench/gpu_pretrain.sh anchor          # the anchor: eager and compiled, batch 96 and 256 (~6 min)
#   bash bench/gpu_pretrain.sh paper3 b256     # run 3; batch 256                            (~7 min)
#   bash bench/gpu_pretrain.sh sepemb tests    # the Sep Emb model; the GPU tests (no sync in an update)
#   bash bench/gpu_pretrain.sh fp16 nodeferred remainder   # the paper config's fp16; fairseq reading the
#                                              # loss and norm every step; after an epoch's short batch
# Keep $OUT's JSON in bench/measured/ (h100_pretrain_*.json) and plan (on any machine) with
#   python -m xling.cluster.budget --rate-from bench/measured/<a paper run>.json
set -uo pipefail
OUT=${OUT:?run on the device machine, where OUT is set}
[ $# -gt 0 ] || { echo "usage: $0 PART... (paper1 paper2 paper3 anchor b256 sepemb tests fp16 nodeferred remainder)" >&2; exit 2; }
ANCHOR=${ANCHOR:-.anchors/pretrain_anchor.py}
DEVICE=${DEVICE:-cuda}   # DEVICE=cpu with EXTRA="--layers 1 --dim 32 ..." checks this script without a GPU
PY=${PYTHON:-python3}

if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
  export PYTHONPATH=src:/tmp/site
else
  export PYTHONPATH=src
fi
export PYTHONUNBUFFERED=1 TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
DATA=${DATA:-/tmp/bench_pretrain_data}  # the toy corpora, written once per machine and batch size
# 20 steps a block, 7 timed blocks per engine; EXTRA: more options, after these (later ones win)
PAPER=(--device "$DEVICE" --layers 8 --dim 768 --heads 12 --ffn 3072 --tokens-per-sample 256
       --vocab-per-language 40000 --steps 20 --blocks 7)
read -r -a EXTRA_ARGS <<<"${EXTRA:-}"
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv
  "$PY" -c "import torch; print('torch', torch.__version__, torch.version.cuda)"; } > "$OUT/env.txt" 2>&1

bench() {  # bench NAME BATCH SECONDS ARGS...: $OUT/NAME.json; its output appended to $OUT/bench.log
  local name=$1 batch=$2 limit=$3
  shift 3
  echo "== bench_pretrain $name: batch $batch $*" | tee -a "$OUT/bench.log"
  timeout "$limit" "$PY" bench/bench_pretrain.py "${PAPER[@]}" --batch "$batch" --data "$DATA/b$batch" "$@" \
    "${EXTRA_ARGS[@]}" --json "$OUT/$name.json" 2>&1 | tee -a "$OUT/bench.log" \
    | grep -v -E "^(INFO|DEBUG|WARNING)|[Ww]arn|hydra|deprecat" || true
}

for part in "$@"; do
  case $part in
    paper1 | paper2 | paper3)  # three runs, each its own process (its own compile, warm-up and blocks)
      bench "paper_b96_run${part#paper}" 96 330 ;;
    anchor)  # the plain steps of the issue's table; then compiled with the table padded to 79,936 rows
      timeout 420 "$PY" "$ANCHOR" --variants eager,compile --batches 96,256 --log "$OUT/anchor.jsonl" 2>&1 \
        | tee "$OUT/anchor.log"
      timeout 150 "$PY" "$ANCHOR" --variants compile --batches 96 --vocab 79936 --log "$OUT/anchor.jsonl" 2>&1 \
        | tee -a "$OUT/anchor.log" ;;
    b256) bench paper_b256 256 330 ;;
    sepemb) bench paper_sep_emb_b96 96 330 --sep-emb ;;
    tests) timeout 240 "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/test_pretrain_gpu.py 2>&1 \
        | tee "$OUT/gpu_tests.log" ;;
    fp16) bench paper_b96_fp16 96 200 --precision fp16 --blocks 5 ;;
    nodeferred) bench paper_b96_no_deferred 96 150 --no-deferred --blocks 5 ;;
    remainder) bench paper_b96_remainder 96 200 --remainder-batch --blocks 5 ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
