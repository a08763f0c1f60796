#!/usr/bin/env bash
# gpu_check.sh: every GPU claim of the pipeline in ONE command of at most 9 minutes on a fresh H100
# or H200, from a working tree with carried wheels (no package index on the node, nothing compiled
# there). Its exit status is the verdict: 0 only when every part that ran passed and every GPU test
# that ran passed; summary.txt's first line says PASS or FAIL and why.
#
# Parts, in order of value, each under its own timeout; a part is skipped, and its JSON says so,
# when the time left cannot hold it (PARTS="tests grid" runs only those, in this order):
#
#   part      what                                                          estimate  skipped under  cap
#   setup     wheels unpacked beside the node's packages, versions read        20 s
#   tests     the GPU-marked tests through `make test-gpu`, those not yet      290 s       60 s      330 s
#             passed on a GPU first (TESTS below); each at most 150 s; a
#             failed or erroring test fails the part
#   grid      the fine-tuning grid jobs (bench/bench_finetune.py, compiled     150 s       60 s      180 s
#             bf16): NER's and parsing's 3 cells at batch 32, XNLI's 9 at
#             batch 4; cell-examples/s against the same cells as jobs of one
#             cell and the best single step; the engines' losses on the same
#             batches agree before any rate (else the part fails)
#   pretrain  the pretraining step at the paper's shapes (8 x 768, batch 96     90 s       60 s      120 s
#             x 256, ~80k vocabulary) in PRETRAIN_PRECISION (default fp16,
#             the V100 recipe; bf16 measured 2026-11-26), compiled, against
#             the best plain PyTorch step of the same model, same weights:
#             their losses agree first, then tokens/s, MFU, ratio
#   jobs      a whole bf16 pretraining job as the rule runs it, and an fp16     80 s       60 s      150 s
#             job stopped by SIGTERM (measured and passed 2026-11-26: not in
#             the default PARTS)
#   summary                                                                     5 s
#   total     BUDGET=560 s for the parts (the default parts' estimates, setup and summary sum to
#             555 s); the call's timeout_s 590
#
# Preparation, once, where an index is reachable (docs/benchmarks.md):
#   scripts/gpu_node_wheels.sh tests .whl     # ~41 MiB of wheels the node lacks (fairseq: its 3.12 wheel)
# The one device call (a 15-minute window: start-up 1-3 min + this command):
#   command "COMMIT=<git rev-parse HEAD> bash bench/gpu_check.sh", carry [".whl"], timeout_s 590
# It writes to $OUT: env.json, one <part>.json per part (each: device, torch, CUDA, commit, date,
# status, seconds, numbers), summary.txt (one screen) and check.log (everything).
#
# The same script on a CPU, at tiny shapes, so that it cannot rot between GPU windows
# (tests/test_gpu_check.py runs it, parses every JSON, and runs it again with a failing test in
# TESTS_OVERRIDE to see it fail):
#   DEVICE=cpu OUT=/tmp/check PYTHON=.venv/bin/python bash bench/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEVICE=${DEVICE:-cuda}
OUT=${OUT:?set OUT, the folder for the JSON and the summary (the device tool sets it)}
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/gpu_check}
PARTS=${PARTS:-tests grid pretrain}
PRETRAIN_PRECISION=${PRETRAIN_PRECISION:-fp16}
if [[ $DEVICE == cuda ]]; then BUDGET=${BUDGET:-560}; else BUDGET=${BUDGET:-300}; fi
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
say "setup done, $(left) s left; parts: $PARTS"

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
            --vocab-per-language 40000 --batch 96 --precision "$PRETRAIN_PRECISION" --compile true --steps 10
            --blocks 5 --max-warmup-blocks 6)
  GRID_MODEL=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --vocab 80000 --buckets 64 --compile --bf16
              --no-single-compile --steps 30 --rounds 5 --startup-runs 0)
  # not yet measured first (NER's and parsing's batch 32, planned at a one-cell floor), then XNLI's
  # batch 4 on the current code (1,161 cell-ex/s on an H100 2026-11-26 against the 1,200 goal)
  GRID_ROWS=("ner 32" "parsing 32" "xnli 4 --xnli-tokens 42")
  # first those no window has passed on the current fine-tuning loop (2026-11-28 on an H100 passed
  # 18: every test at least once in some window; it cut the parsing grid job and did not reach the
  # pretraining jobs nor the step's eager bf16 variant), each group by value per second; then the
  # rest, again. Node ids only: a file named beside one of its tests collects in the file's order.
  STEP=tests/test_pretrain_gpu.py::test_gpu_step_trains_compiled_without_device_syncs
  GPU=tests/test_gpu.py
  JOB=$GPU::test_pretraining_job_on_one_gpu_trains_and_exits_cleanly
  GRIDT=tests/test_finetune_grid.py::test_grid_steps_do_not_wait_for_the_gpu
  GRIDJOB=$GPU::test_a_grid_job_on_cuda_learns_as_on_the_cpu
  KILLED=$GPU::test_a_killed_gpu_job_leaves_nothing_and_resumes_to_the_full_count
  # (a parametrised id with spaces cannot pass through PYTEST_ADDOPTS: the killed jobs go as one)
  TESTS=("$JOB[default-fp16-False]" "$JOB[default-bf16-True]" "$JOB[sep_emb-fp16-False]" "$GRIDJOB[parsing]"
         "$STEP[False-bf16]" "$STEP[False-fp16]" "$STEP[True-bf16]" "$STEP[True-fp16]" "$KILLED"
         "$GPU::test_finetuning_each_task_on_cuda_learns" "$GPU::test_export_and_ours_on_cuda_stay_within_the_kernels_rounding"
         "$GPU::test_backtranslation_on_cuda_gives_the_cpus_sentences" "$GPU::test_sentence_features_on_cuda_stay_within_the_kernels_rounding"
         tests/test_finetune.py::test_tiny_finetune_on_cuda "$GRIDT" "$GRIDJOB[xnli]" "$GRIDJOB[ner]")
  EST=(290 60 330 150 60 180 90 60 120 80 60 150)
  TEST_TIMEOUT=150
else  # the same parts at tiny shapes
  PRETRAIN=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --tokens-per-sample 32 --vocab-per-language 100
            --batch 4 --precision fp32 --compile false --steps 2 --blocks 5 --max-warmup-blocks 2)
  GRID_MODEL=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --vocab 200 --steps 2 --rounds 5 --dev-examples 8
              --startup-runs 0)
  GRID_ROWS=("xnli 4 --xnli-tokens 12" "ner 16")
  STEP=tests/test_pretrain_gpu.py::test_gpu_step_trains_compiled_without_device_syncs
  TESTS=("$STEP[False-bf16]" "$STEP[True-fp16]")  # skipped without CUDA: the plumbing runs
  EST=(10 5 120 15 5 120 15 5 120 25 10 120)
  TEST_TIMEOUT=120
fi
# a test run of the script's own verdict: these node ids instead (tests/test_gpu_check.py)
if [[ -n ${TESTS_OVERRIDE:-} ]]; then read -ra TESTS <<< "$TESTS_OVERRIDE"; fi

for part in $PARTS; do
  case $part in
  # --- the GPU-marked tests, as many as fit ----------------------------------------------------------
  tests)
    if begin_part tests "${EST[0]}" "${EST[1]}" "${EST[2]}"; then
      rm -f "$WORK/tests.xml" "$WORK/tests.running"
      # tests/conftest.py keeps the node ids of the tests running: names those an interrupt cuts
      export XLING_RUNNING_TEST=$WORK/tests.running
      export PYTEST_ADDOPTS="-p no:cacheprovider --timeout=$TEST_TIMEOUT --junitxml=$WORK/tests.xml ${TESTS[*]}"
      if command -v make > /dev/null; then  # `make test-gpu` itself: it needs no venv (the ids above, not its files)
        run make --no-print-directory test-gpu GPU_PYTHON="$PY" GPU_TESTS=
      else
        say "tests: no make on this machine: pytest as make test-gpu runs it"
        run "$PY" -m pytest -q -m gpu
      fi
      rc=$?
      unset PYTEST_ADDOPTS XLING_RUNNING_TEST
      "$PY" bench/gpu_check.py tests "$WORK/tests.raw.json" "$WORK/tests.xml" --running "$WORK/tests.running" \
        >> "$LOG" 2>&1
      # a failed or erroring test fails the part (pytest's exit status 1); a cut run times out
      end_part tests "$rc" "$WORK/tests.raw.json" "pytest exit status $rc"
    fi ;;
  # --- the fine-tuning grid jobs ---------------------------------------------------------------------
  grid)
    if begin_part grid "${EST[3]}" "${EST[4]}" "${EST[5]}"; then
      rm -f "$WORK/grid.raw.json"
      # one benchmark process per row: a row is kept when a later one is cut short; rows merged
      rc=0 rows_json=() part_limit=$LIMIT
      for i in "${!GRID_ROWS[@]}"; do
        read -ra r <<< "${GRID_ROWS[$i]}"
        rows_json+=("$WORK/grid.row$i.json")
        rm -f "${rows_json[$i]}"
        # the rows share the part's limit: each gets what the rows before it left
        LIMIT=$((part_limit - ($(date +%s) - PART_T0)))
        ((LIMIT < 10)) && { rc=124; break; }
        run "$PY" bench/bench_finetune.py "${GRID_MODEL[@]}" --tasks "${r[0]}" --batches "${r[1]}" "${r[@]:2}" \
          --json "${rows_json[$i]}"
        rc_row=$?
        ((rc == 0)) && rc=$rc_row
        ((rc_row == 124 || rc_row == 137)) && break
      done
      LIMIT=$part_limit
      "$PY" bench/gpu_check.py merge-rows "$WORK/grid.raw.json" "${rows_json[@]}" >> "$LOG" 2>&1
      rows=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$WORK/grid.raw.json" \
        2> /dev/null || echo 0)
      end_part grid $rc "$WORK/grid.raw.json" "$rows of ${#GRID_ROWS[@]} row(s) measured"
    fi ;;
  # --- the pretraining step at the paper's shapes ----------------------------------------------------------
  pretrain)
    if begin_part pretrain "${EST[6]}" "${EST[7]}" "${EST[8]}"; then
      rm -f "$WORK/pretrain.raw.json"
      run "$PY" bench/bench_pretrain.py "${PRETRAIN[@]}" --data "$WORK/corpus" --json "$WORK/pretrain.raw.json"
      end_part pretrain $? "$WORK/pretrain.raw.json"
    fi ;;
  # --- whole pretraining jobs: bf16 to its end, fp16 stopped by SIGTERM -------------------------------
  jobs)
    if begin_part jobs "${EST[9]}" "${EST[10]}" "${EST[11]}"; then
      # the jobs' own clock ends 20 s before the limit: a job still running is stopped and recorded
      run "$PY" bench/gpu_check.py jobs "$WORK/jobs.raw.json" --device "$DEVICE" --seconds $((LIMIT - 20))
      end_part jobs $? "$WORK/jobs.raw.json"
    fi ;;
  *) say "unknown part $part (tests, grid, pretrain, jobs)" ;;
  esac
done

"$PY" bench/gpu_check.py summary "$OUT" $PARTS 2>> "$LOG" | tee -a "$LOG"
verdict=${PIPESTATUS[0]}
say "done: $(left) s of the ${BUDGET} s budget left"
exit "$verdict"
