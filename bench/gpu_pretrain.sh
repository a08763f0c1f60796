#!/usr/bin/env bash
# Issue 27's pretraining measurements on one GPU (an H100 of the device tool), each part one call
# of at most ~8 minutes, all results (JSON and logs) written to $OUT:
#
#   bash bench/gpu_pretrain.sh setup tests       # installs the carried wheels; the GPU tests (no device sync)
#   bash bench/gpu_pretrain.sh anchor            # the gpu-anchors' reference steps
#   bash bench/gpu_pretrain.sh paper             # bench_pretrain.py, paper model, batch 96, 3 runs
#   bash bench/gpu_pretrain.sh b256 sepemb       # batch 256; the Sep Emb model at batch 96
#   bash bench/gpu_pretrain.sh budget            # the budget planned from run 1 (CPU only)
#
# 'setup' runs first in every call (a fresh machine starts bare; on a warm one it only checks).
# Parts run in the order given; a failing part stops the call (set -e). The device tool brings
# back at most 8 files of $OUT per call: these parts write gpu.txt, tests.log, anchor.{log,jsonl},
# bench.log (all runs) and one JSON per run. What it needs on the machine:
#   * python3 with CUDA torch (the image's), and the wheels of what the image lacks in
#     $WHEELS (default .gpu-wheels/, carried: fairseq-fixed, hydra-core, omegaconf, antlr4,
#     bitarray, jsonschema and its parts);
#   * the anchor script at $ANCHOR (default shared/tools/gpu-anchors/pretrain_anchor.py; a copy of
#     ../shared/tools/gpu-anchors carried into the checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
PY=${PYTHON:-python3}
WHEELS=${WHEELS:-.gpu-wheels}
ANCHOR=${ANCHOR:-shared/tools/gpu-anchors/pretrain_anchor.py}
DATA=${DATA:-/tmp/bench_pretrain_data}   # the toy corpus, written once per machine and reused
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
mkdir -p "$OUT"

# the paper's model (3.1): 8 x 768, 12 heads, FFN 3072, 256-token streams, ~80k vocabulary
# EXTRA: more bench_pretrain.py options, after these (later ones win), e.g. "--steps 40"; DEVICE=cpu with
# a tiny model in EXTRA checks this script without a GPU
PAPER=(--device "${DEVICE:-cuda}" --dim 768 --layers 8 --heads 12 --ffn 3072 --tokens-per-sample 256
       --vocab-per-language 40000 --steps 20 --blocks 7)
read -r -a EXTRA_ARGS <<<"${EXTRA:-}"

bench() {  # bench NAME BATCH ARGS...: one run of bench_pretrain.py: $OUT/NAME.json, its output in $OUT/bench.log
    local name=$1 batch=$2
    shift 2
    echo "== bench_pretrain $name: batch $batch $*" | tee -a "$OUT/bench.log"
    "$PY" bench/bench_pretrain.py "${PAPER[@]}" --batch "$batch" --data "$DATA/b$batch" "$@" "${EXTRA_ARGS[@]}" \
        --json "$OUT/$name.json" 2>&1 | tee -a "$OUT/bench.log" | grep -v -E "^(INFO|DEBUG|WARNING):|Warning|warn" || true
    test -s "$OUT/$name.json"
}

for part in "$@"; do
    case $part in
    setup)
        nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
        if ! "$PY" -c "import fairseq, hydra, jsonschema" 2>/dev/null; then
            "$PY" -m pip install --no-index --no-deps --no-build-isolation --find-links "$WHEELS" \
                fairseq-fixed hydra-core omegaconf antlr4-python3-runtime bitarray jsonschema \
                jsonschema-specifications referencing rpds-py 2>&1 | tail -3
        fi
        "$PY" -c "import torch, fairseq; print('torch', torch.__version__, 'fairseq', fairseq.__version__, torch.cuda.get_device_name(0))" |
            tee -a "$OUT/gpu.txt"
        ;;
    anchor)  # the plain reference steps of the issue's table, beside ours on the same GPU
        echo "== pretrain_anchor (vocabulary 79,897 as measured before; then padded to 79,936)"
        "$PY" "$ANCHOR" --variants eager,compile --batches 96,256 --log "$OUT/anchor.jsonl" 2>&1 | tee "$OUT/anchor.log"
        "$PY" "$ANCHOR" --variants compile --batches 96 --vocab 79936 --log "$OUT/anchor.jsonl" 2>&1 |
            tee -a "$OUT/anchor.log"
        ;;
    paper)  # 3 runs, each its own process (its own compile, warm-up and blocks)
        for run in 1 2 3; do bench "paper_b96_run$run" 96; done
        ;;
    b256) bench paper_b256 256 ;;
    sepemb) bench paper_sep_emb_b96 96 --sep-emb ;;
    nodeferred) bench paper_b96_no_deferred 96 --no-deferred ;;  # what fairseq's per-step reads cost
    remainder) bench paper_b96_remainder 96 --remainder-batch ;;  # after an epoch's short batch: dynamic shapes
    fp16) bench paper_b96_fp16 96 --precision fp16 ;;  # the paper config's precision
    tests)  # the GPU tests: compiled bf16/fp16 steps train with no device sync
        "$PY" -m pytest -q -x -m gpu tests/test_pretrain_gpu.py 2>&1 | tee "$OUT/tests.log" | tail -5
        ;;
    budget)
        # exit status 1 says a job would not fit its runtime: the table says which, the call goes on
        "$PY" -m xling.cluster.budget --rate-from "$OUT/paper_b96_run1.json" | tee "$OUT/budget.md" || true
        ;;
    *)
        echo "unknown part $part (setup tests anchor paper b256 sepemb nodeferred remainder fp16 budget)" >&2
        exit 2
        ;;
    esac
done
