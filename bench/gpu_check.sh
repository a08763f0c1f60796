#!/usr/bin/env bash
# gpu_check.sh: every GPU claim of the pipeline in ONE command of at most 8 minutes on a fresh H100,
# from a working tree with carried wheels (no package index on the node, nothing compiled there).
# Parts, in order of value, each under its own timeout; a part is skipped, and its JSON says so,
# when the time left cannot hold it:
#
#   part      what                                                          estimate  skipped under  cap
#   setup     wheels unpacked beside the node's packages, versions read        30 s
#   pretrain  the pretraining step at the paper's shapes (8 x 768, batch 96     170 s       100 s     240 s
#             x 256, ~80k vocabulary, bf16, compiled) against the best plain
#             PyTorch step of the same model, same process: tokens/s, MFU,
#             ratio, min/median/max over 5 blocks (bench/bench_pretrain.py)
#   jobs      a whole bf16 pretraining job as the rule runs it (4 loader          80 s       60 s      150 s
#             workers, compiled: auto leaves a model this small eager) trains,
#             checkpoints, exits within 10 s of its last update, leaves no
#             process; beside it an fp16 job stopped by SIGTERM: nothing left
#             10 s later
#   grid      the XNLI grid job, 9 cells, batch 8 then 4, compiled bf16:          120 s       90 s      180 s
#             cell-examples/s and peak memory (bench/bench_finetune.py)        (+80 s for batch 4, if left)
#   tests     the GPU-marked tests through `make test-gpu`, as many as fit      the rest     40 s
#             (in order of value per second: see TESTS below)
#   summary                                                                     5 s
#   total     BUDGET=450 s for the parts (the estimates sum to 445 s; the compiles of a fresh
#             machine are most of it); the call's timeout_s 480 s
#   measured  on a fresh H100 (2026-11-26): setup 17 s, pretrain 81 s, jobs 80 s, grid 124 s (both
#             batch sizes), tests the 144 s left (6 of the 26 tests), 446 s in all
#
# Preparation, once, where an index is reachable (docs/benchmarks.md):
#   scripts/gpu_node_wheels.sh tests .whl     # ~41 MiB of wheels the node lacks (fairseq: its 3.12 wheel)
# The one device call (a 15-minute window: start-up 1-3 min + this command):
#   command "COMMIT=<git rev-parse HEAD> bash bench/gpu_check.sh", carry [".whl"], timeout_s 480
# It writes to $OUT: env.json, pretrain.json, jobs.json, grid.json, tests.json (each: device, torch,
# CUDA, commit, date, status, seconds, numbers), summary.txt (one screen) and check.log (everything).
#
# The same script on a CPU, at tiny shapes, so that it cannot rot between GPU windows
# (tests/test_gpu_check.py runs it and parses every JSON; 95-132 s on 2 cores at load 9-13, most of it
# two pretraining jobs starting fairseq):
#   DEVICE=cpu OUT=/tmp/check PYTHON=.venv/bin/python bash bench/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEVICE=${DEVICE:-cuda}
OUT=${OUT:?set OUT, the folder for the JSON and the summary (the device tool sets it)}
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/gpu_check}
if [[ $DEVICE == cuda ]]; then BUDGET=${BUDGET:-450}; else BUDGET=${BUDGET:-240}; fi
mkdir -p "$OUT" "$WORK"
LOG=$OUT/check.log
: > "$LOG"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
say() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$LOG"; }

# --- setup: the carried wheels unpacked beside the node's own packages (its torch stays) ------------
# --target leaves no fairseq-train on PATH: the launcher then runs `python -m fairseq_cli.train`.
# (On a CPU the wheels, built for the node's Python 3.12, are left alone.)
if [[ $DEVICE == cuda ]] && compgen -G ".whl/*.whl" > /dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" \
    .whl/*.whl >> "$LOG" 2>&1 || say "SETUP: the wheels did not install (see check.log)"
  SITE=$WORK/site
fi
export PYTHONPATH=$PWD/src${SITE:+:$SITE}${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 XLING_PROGRESS_INTERVAL_S=600
{ command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version \
  --format=csv; echo "nproc $(nproc); make: $(command -v make || echo none)"; } >> "$LOG" 2>&1
"$PY" bench/gpu_check.py env "$OUT" >> "$LOG" 2>&1 || say "SETUP: the environment could not be read"
say "setup done, $(left) s left"

# begin_part NAME ESTIMATE MIN CAP: sets LIMIT (the part's timeout), or records the part as skipped
begin_part() {
  local name=$1 estimate=$2 min=$3 cap=$4 l
  l=$(left)
  PART_T0=$(date +%s)
  PART_ESTIMATE=$estimate
  if ((l < min)); then
    say "$name: SKIPPED, ${l} s left, it needs ${min} s"
    "$PY" bench/gpu_check.py record "$OUT" "$name" skipped 0 --estimate "$estimate" \
      --note "skipped: ${l} s left, the part needs at least ${min} s" >> "$LOG" 2>&1
    return 1
  fi
  LIMIT=$((l < cap ? l : cap))
  say "$name: up to ${LIMIT} s (estimate ${estimate} s)"
}
# end_part NAME RC RAW [NOTE]: the part's JSON from its raw result and exit status
end_part() {
  local name=$1 rc=$2 raw=$3 note=${4:-} status=ok seconds
  seconds=$(($(date +%s) - PART_T0))
  if ((rc == 124 || rc == 137)); then
    status=timeout note="stopped at its ${LIMIT} s limit${note:+; $note}"
  elif ((rc != 0)); then
    status=failed note="exit status ${rc}${note:+; $note}"
  fi
  say "$name: $status after ${seconds} s"
  "$PY" bench/gpu_check.py record "$OUT" "$name" "$status" "$seconds" --raw "$raw" --estimate "$PART_ESTIMATE" \
    --note "$note" >> "$LOG" 2>&1
}
# SIGINT at the limit: Python stops where it is (pytest still writes its report; a job's launcher
# passes the signal on to its ranks); SIGKILL 15 s later if it has not
run() { timeout -s INT -k 15 "$LIMIT" "$@" >> "$LOG" 2>&1; }

if [[ $DEVICE == cuda ]]; then
  PRETRAIN=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --tokens-per-sample 256
            --vocab-per-language 40000 --batch 96 --precision bf16 --compile true --steps 10 --blocks 5
            --max-warmup-blocks 6)
  GRID=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --vocab 80000 --batches 8 4 --xnli-tokens 42
        --buckets 64 --compile --bf16 --no-single-compile --steps 30 --rounds 5)
  # those that have not yet passed on a GPU first (bench/measured/gpu_check/), each group by value per
  # second: the quick fine-tuning, export and analysis paths, the compiled bf16 job (beside the same job
  # on the CPU), a killed job's resume, the step variants, the grid's. Node ids only: a file named
  # beside one of its tests collects in the file's order.
  STEP=tests/test_pretrain_gpu.py::test_gpu_step_trains_compiled_without_device_syncs
  GPU=tests/test_gpu.py
  JOB=$GPU::test_pretraining_job_on_one_gpu_trains_and_exits_cleanly
  TESTS=("$GPU::test_finetuning_each_task_on_cuda_learns" "$GPU::test_export_equals_ours_on_cuda_without_tf32"
         "$GPU::test_export_and_ours_differ_on_cuda_no_more_than_cuda_differs_from_the_cpu"
         "$GPU::test_backtranslation_on_cuda_gives_the_cpus_sentences" "$GPU::test_sentence_features_on_cuda_equal_the_cpus"
         "$JOB[default-bf16-True]" "$GPU::test_a_killed_gpu_job_leaves_nothing_and_resumes_to_the_full_count"
         "$STEP[False-fp16]" "$STEP[True-bf16]" "$STEP[True-fp16]" tests/test_finetune_grid.py
         tests/test_finetune.py "$JOB[default-fp16-False]" "$JOB[sep_emb-fp16-False]" "$STEP[False-bf16]")
  EST=(170 100 240 80 60 150 120 90 180 40)
else  # the same parts at tiny shapes
  PRETRAIN=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --tokens-per-sample 32 --vocab-per-language 100
            --batch 4 --precision fp32 --compile false --steps 2 --blocks 5 --max-warmup-blocks 2)
  GRID=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --vocab 200 --batches 4 --xnli-tokens 12 --steps 2
        --rounds 5 --dev-examples 8)
  STEP=tests/test_pretrain_gpu.py::test_gpu_step_trains_compiled_without_device_syncs
  TESTS=("$STEP[False-bf16]" "$STEP[True-fp16]")  # skipped without CUDA: the plumbing runs
  EST=(15 5 120 25 10 120 10 5 120 10)
fi

# --- 1. the pretraining step at the paper's shapes ------------------------------------------------------
if begin_part pretrain "${EST[0]}" "${EST[1]}" "${EST[2]}"; then
  run "$PY" bench/bench_pretrain.py "${PRETRAIN[@]}" --data "$WORK/corpus" --json "$WORK/pretrain.raw.json"
  end_part pretrain $? "$WORK/pretrain.raw.json"
fi

# --- 2. whole pretraining jobs: bf16 to its end, fp16 stopped by SIGTERM -------------------------------
if begin_part jobs "${EST[3]}" "${EST[4]}" "${EST[5]}"; then
  # the jobs' own clock ends 20 s before the limit: a job still running is stopped and recorded
  run "$PY" bench/gpu_check.py jobs "$WORK/jobs.raw.json" --device "$DEVICE" --seconds $((LIMIT - 20))
  end_part jobs $? "$WORK/jobs.raw.json"
fi

# --- 3. the XNLI grid job ----------------------------------------------------------------------------------
if begin_part grid "${EST[6]}" "${EST[7]}" "${EST[8]}"; then
  # a row is written as soon as it is measured: batch 8's stays when batch 4's is cut short
  run "$PY" bench/bench_finetune.py "${GRID[@]}" --tasks xnli --startup-runs 0 --json "$WORK/grid.raw.json"
  rc=$?
  rows=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$WORK/grid.raw.json" \
    2> /dev/null || echo 0)
  end_part grid $rc "$WORK/grid.raw.json" "$rows row(s) measured"
fi

# --- 4. the GPU-marked tests, as many as fit ---------------------------------------------------------------
if begin_part tests "${EST[9]}" "${EST[9]}" "$BUDGET"; then
  LIMIT=$((LIMIT - 10))  # the summary's time
  rm -f "$WORK/tests.xml"
  ADDOPTS="-p no:cacheprovider --timeout=$((LIMIT - 5)) --junitxml=$WORK/tests.xml ${TESTS[*]}"
  export PYTEST_ADDOPTS=$ADDOPTS
  if command -v make > /dev/null; then  # `make test-gpu` itself: it needs no venv
    run make --no-print-directory test-gpu GPU_PYTHON="$PY"
  else
    say "tests: no make on this machine: pytest as make test-gpu runs it"
    run "$PY" -m pytest -q -m gpu
  fi
  rc=$?
  unset PYTEST_ADDOPTS
  "$PY" bench/gpu_check.py tests "$WORK/tests.raw.json" "$WORK/tests.xml" >> "$LOG" 2>&1
  # pytest's own failures are the tests' (in tests.json); only a run that did not finish is the part's
  end_part tests $((rc == 124 || rc == 137 ? rc : 0)) "$WORK/tests.raw.json" "pytest exit status $rc"
fi

"$PY" bench/gpu_check.py summary "$OUT" 2>> "$LOG" | tee -a "$LOG"
say "done: $(left) s of the ${BUDGET} s budget left"
