#!/usr/bin/env bash
# Issue 28's GPU measurements: the fine-tuning grid job (xling.finetune.grid) on the paper's model
# (8 x 768, 12 heads, FFN 3072, 80k vocabulary) against the cells as separate jobs (today's loop)
# and the best single-cell step, with the shared anchor (finetune_anchor.py) beside it in the same
# command, so every ratio is measured side by side on one GPU. Each part fits one device command
# (10 minutes; about 4 compilations each); everything goes to $OUT (JSON + logs).
#
# Before the first run, in the repo root of the session's machine (the device has no registry and
# lacks sacremoses and jsonschema, which the package imports; the anchor lives outside the repo):
#   mkdir -p .anchors && cp ../shared/tools/gpu-anchors/finetune_anchor.py .anchors/
#   printf '/.anchors/\n/.whl/\n' >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
#     sacremoses==0.2.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 \
#     rpds-py==2026.9.1
# Then three runs, each with carry [".anchors", ".whl"] and timeout_s 600:
#   bash bench/gpu_finetune.sh xnli 4     # XNLI, batch 4: anchor + 9-cell grid      (~8 min)
#   bash bench/gpu_finetune.sh xnli 8     # XNLI, batch 8                             (~8 min)
#   bash bench/gpu_finetune.sh tagging    # NER and parsing grids, batch 16 and 32; the GPU tests
# Keep $OUT's files in bench/measured/ (h100_finetune_grid_*.json); plan with
#   python -m xling.cluster.budget --rate-from bench/measured/h100_pretrain_paper_model.json \
#     --finetune-rate-from <the merged JSON>
set -uo pipefail
OUT=${OUT:?run on the device machine, where OUT is set}
part=${1:?xnli BATCH | tagging}
ANCHOR=${ANCHOR:-.anchors/finetune_anchor.py}

if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || exit 1
  export PYTHONPATH=src:/tmp/site
else
  export PYTHONPATH=src
fi
export PYTHONUNBUFFERED=1 XLING_PROGRESS_INTERVAL_S=600
PAPER=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --vocab 80000 --startup-runs 0 --rounds 5)
{ nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"; } > "$OUT/env.txt" 2>&1

case $part in
  xnli)
    batch=${2:?batch size: 4 or 8}
    # the anchor: eager fp32 (today's step), compiled bf16, and 9 cells as one batched model
    timeout 250 python3 bench/finetune_anchor_run.py --anchor "$ANCHOR" --batch "$batch" \
      --variants eager_fp32 compile ensemble9_compile --json "$OUT/anchor_xnli_b$batch.json" \
      2>&1 | tee "$OUT/anchor_xnli_b$batch.log"
    # our grid job (compiled, bf16) against the separate jobs and the best single step; then the
    # grid eager in fp32 and bf16 (where bf16 pays). --xnli-tokens 42: pairs of 21-63 pieces, all
    # in one bucket of 64 tokens like the anchor's batches (one compilation per step kind).
    timeout 330 python3 bench/bench_finetune.py "${PAPER[@]}" --tasks xnli --batches "$batch" --xnli-tokens 42 \
      --buckets 64 --compile --bf16 --steps 40 --grid-variants fp32-eager bf16-eager \
      --json "$OUT/grid_xnli_b$batch.json" 2>&1 | tee "$OUT/grid_xnli_b$batch.log"
    ;;
  tagging)
    # 3 cells a batch size (the learning rates); NER sentences (4-12 words, up to 26 pieces) in one
    # bucket of 32 tokens, parsing's (8-24 words) in one of 64; the single step eager (its
    # compilations would not fit this command)
    for task in ner parsing; do
      [ $task = ner ] && b=32 || b=64
      timeout 230 python3 bench/bench_finetune.py "${PAPER[@]}" --tasks $task --buckets $b --compile --bf16 \
        --no-single-compile --steps 30 --json "$OUT/grid_$task.json" 2>&1 | tee "$OUT/grid_$task.log"
    done
    timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_finetune_grid.py 2>&1 \
      | tee "$OUT/gpu_tests.log"
    ;;
  *)
    echo "unknown part $part: xnli BATCH | tagging" >&2
    exit 2
    ;;
esac
