#!/usr/bin/env bash
# gpu_check.sh: every GPU claim of the pipeline in one script of parts by value, each call at most
# 9 minutes on a fresh H100 or H200, from a working tree with carried wheels (no package index on the
# node, nothing compiled there). Its exit status is the verdict: 0 only when every part that ran
# passed and every GPU test that ran passed; summary.txt's first line says PASS or FAIL and why.
#
# Parts, in order of value, each under its own timeout; a part is skipped, and its JSON says so,
# when the time left cannot hold it or what it needs was not carried (PARTS="tests pretrain" runs
# only those, in this order). Estimates are plans, not measurements, where a part has not run yet:
#
#   part      what                                                          estimate  skipped under  cap
#   setup     wheels unpacked beside the node's packages, versions read        20 s
#   tests     `make test-gpu`: every GPU-marked test (TESTS below) on 8        240 s       60 s      330 s
#             pytest-xdist workers sharing the GPU, the slow ones first, each
#             at most 150 s; a failed or erroring test fails the part (the
#             goal: 5 minutes on a fresh node; never run so yet)
#   workflow  `make demo GPUS=1` (the demo's 212 jobs, 4 on the GPU at once),   300 s      120 s      420 s
#             timed; its Table 1 and compute ledger kept (in workflow.json;
#             Table 1 also in the summary). Needs Snakemake: the demo wheels
#             (.whl-demo). Never run on a GPU yet
#   pretrain  the pretraining step at the paper's shapes (8 x 768, batch 96    140 s       60 s      180 s
#             x 256, ~80k vocabulary) in PRETRAIN_PRECISION (default bf16),
#             compiled, against the best plain PyTorch step and the same
#             model in transformers (BertModel, SDPA), same weights: their
#             losses agree within the device's rounding first, then
#             tokens/s, MFU, ratios
#   ab        the pretraining step's A/Bs (AB_RUNS: SDPA backends, AdamW's      90 s       90 s      300 s
#             kernel, CUDA graphs, a larger batch per GPU), one benchmark
#             run each, as many as fit; each agrees before it times
#   grid      (not in the default PARTS: measured 2026-11-26/28) the           150 s       60 s      180 s
#             fine-tuning grid jobs (bench/bench_finetune.py, compiled bf16)
#   jobs      (not in the default PARTS: passed 2026-11-26) a whole bf16        80 s       60 s      150 s
#             pretraining job and an fp16 job stopped by SIGTERM
#   summary                                                                     5 s
#   budget    BUDGET=560 s for a call's parts; the call's timeout_s 590
#
# A call carries at most 64 MiB: the tests' wheels (.whl, ~41 MiB) and the demo's (.whl-demo, ~33
# MiB) do not travel together, so a window is two calls on one warm machine; the second finds the
# first's unpacked packages in WORK and adds its own (each call: setup + its parts + summary).
# The checkout travels too: a run's handover archive in results-unfinished/ (demo-full's ~17 MiB)
# leaves too little beside .whl, so move that folder out of the checkout for the window, then back.
#   call 1: carry [".whl"],      PARTS="tests"                       20 + 240 + 5 = 265 s
#   call 2: carry [".whl-demo"], PARTS="workflow pretrain ab"        20 + 300 + 140 + 90 + 5 = 555 s
# (a 15-minute window holds both only if the machine starts quickly: BUDGET=<seconds left> bounds
# the second, whose last parts, of least value, are skipped when the time runs out)
#
# Preparation, once, where an index is reachable (docs/benchmarks.md):
#   scripts/gpu_node_wheels.sh tests .whl          # ~41 MiB of wheels the node lacks (fairseq: its 3.12 wheel)
#   scripts/gpu_node_wheels.sh demo .whl-demo      # the rest of make demo: Snakemake, jieba, fastText, ...
# The device calls (a 15-minute window: start-up 1-3 min + these commands):
#   command "COMMIT=<git rev-parse HEAD> PARTS=tests bash bench/gpu_check.sh", carry [".whl"], timeout_s 590
#   command "COMMIT=<...> PARTS='workflow pretrain ab' BUDGET=<s left - 30> bash bench/gpu_check.sh",
#     carry [".whl-demo"], timeout_s BUDGET + 30
# It writes to $OUT: env.json, one <part>.json per part (each: device, torch, CUDA, commit, date,
# status, seconds, numbers), summary.txt (one screen) and check.log (everything): 3 files and one a
# part, and a window returns 8 at most (so at most 5 parts a call).
#
# The same script on a CPU, at tiny shapes (the workflow part: a dry run of the same command), so
# that it cannot rot between GPU windows (tests/test_gpu_check.py runs it, parses every JSON, and
# runs it again with a failing test in TESTS_OVERRIDE to see it fail):
#   DEVICE=cpu OUT=/tmp/check PYTHON=.venv/bin/python bash bench/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DEVICE=${DEVICE:-cuda}
OUT=${OUT:?set OUT, the folder for the JSON and the summary (the device tool sets it)}
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/gpu_check}
PARTS=${PARTS:-tests workflow pretrain ab}
PRETRAIN_PRECISION=${PRETRAIN_PRECISION:-bf16}
# a loaded 2-core CPU takes minutes for the tiny parts (2026-11-29, load 10: setup 64 s, tests 94 s)
if [[ $DEVICE == cuda ]]; then BUDGET=${BUDGET:-560}; else BUDGET=${BUDGET:-600}; fi
mkdir -p "$OUT" "$WORK"
LOG=$OUT/check.log
: > "$LOG"
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
say() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$LOG"; }

# --- setup: the carried wheels unpacked beside the node's own packages (its torch stays) ------------
# --target leaves no fairseq-train on PATH: the launcher then runs `python -m fairseq_cli.train`. A
# second call on the same machine finds the first's packages in WORK and adds its own wheels.
# (On a CPU the wheels, built for the node's Python 3.12, are left alone.)
if [[ $DEVICE == cuda ]]; then
  for wheels in .whl .whl-demo; do
    compgen -G "$wheels/*.whl" > /dev/null || continue
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" \
      "$wheels"/*.whl >> "$LOG" 2>&1 || say "SETUP: the wheels of $wheels did not install (see check.log)"
  done
  [[ -d $WORK/site ]] && SITE=$WORK/site
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
# run_to FILE COMMAND...: the same, its output also in FILE alone (what a part reads back)
run_to() {
  local file=$1 rc
  shift
  timeout -s INT -k 15 "$LIMIT" "$@" > "$file" 2>&1
  rc=$?
  cat "$file" >> "$LOG"
  return $rc
}

if [[ $DEVICE == cuda ]]; then
  PRETRAIN=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --tokens-per-sample 256
            --vocab-per-language 40000 --batch 96 --precision "$PRETRAIN_PRECISION" --compile true --steps 10
            --blocks 5 --max-warmup-blocks 6)
  # the same model in transformers beside the plain step, for the first run only (each A/B is a
  # switch of the two engines the 40% MFU is asked of)
  PRETRAIN_REFERENCE=(--transformers)
  # by value: the attention kernel (the step's largest share after the softmax), then AdamW's kernel,
  # CUDA graphs, and a larger batch per GPU (the paper's 768 streams an update on 4 GPUs, not 8)
  AB_RUNS=("--sdpa cudnn" "--sdpa flash" "--adamw foreach" "--compile-mode reduce-overhead" "--batch 192")
  GRID_MODEL=(--device cuda --layers 8 --dim 768 --heads 12 --ffn 3072 --vocab 80000 --buckets 64 --compile --bf16
              --no-single-compile --steps 30 --rounds 5 --startup-runs 0)
  GRID_ROWS=("ner 32" "parsing 32" "xnli 4 --xnli-tokens 42")
  # every GPU-marked test (tests/test_gpu_check.py checks the list collects each once); on several
  # workers, tests/conftest.py starts the slow ones first. Node ids only: a file named beside one of
  # its tests collects in the file's order.
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
         "$GPU::test_backtranslation_on_cuda_gives_the_cpus_sentences"
         "$GPU::test_sentence_features_on_cuda_stay_within_the_kernels_rounding"
         tests/test_finetune.py::test_tiny_finetune_on_cuda "$GRIDT" "$GRIDJOB[xnli]" "$GRIDJOB[ner]")
  # estimate, minimum, cap per part, in the order of PARTS_ALL
  EST=(240 60 330 300 120 420 140 60 180 90 90 300 150 60 180 80 60 150)
  TEST_TIMEOUT=150
  WORKFLOW_DRY=()
else  # the same parts at tiny shapes
  PRETRAIN=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --tokens-per-sample 32 --vocab-per-language 100
            --batch 4 --precision fp32 --compile false --steps 2 --blocks 5 --max-warmup-blocks 2)
  PRETRAIN_REFERENCE=(--transformers)
  AB_RUNS=("--sdpa math --adamw foreach")  # both switches in one run: the plumbing, in half the time
  GRID_MODEL=(--device cpu --layers 1 --dim 32 --heads 2 --ffn 64 --vocab 200 --steps 2 --rounds 5 --dev-examples 8
              --startup-runs 0)
  GRID_ROWS=("xnli 4 --xnli-tokens 12" "ner 16")
  STEP=tests/test_pretrain_gpu.py::test_gpu_step_trains_compiled_without_device_syncs
  TESTS=("$STEP[False-bf16]" "$STEP[True-fp16]")  # skipped without CUDA: the plumbing runs
  EST=(10 5 150 30 5 150 15 5 150 20 5 150 15 5 150 25 10 150)
  TEST_TIMEOUT=120
  WORKFLOW_DRY=(-n)  # the demo's 212 jobs planned, not run: minutes of a CPU's time
fi
PARTS_ALL=(tests workflow pretrain ab grid jobs)
est_of() {  # est_of PART: its estimate, minimum and cap
  local i
  for i in "${!PARTS_ALL[@]}"; do
    [[ ${PARTS_ALL[$i]} == "$1" ]] && echo "${EST[@]:$((3 * i)):3}"
  done
}
# a test run of the script's own verdict: these node ids instead (tests/test_gpu_check.py)
if [[ -n ${TESTS_OVERRIDE:-} ]]; then read -ra TESTS <<< "$TESTS_OVERRIDE"; fi

for part in $PARTS; do
  read -r est min cap <<< "$(est_of "$part")"
  case $part in
  # --- the GPU-marked tests, all at once on several workers ---------------------------------------------
  tests)
    if begin_part tests "$est" "$min" "$cap"; then
      rm -f "$WORK/tests.xml" "$WORK/tests.running"
      # tests/conftest.py keeps the node ids of the tests running: names those an interrupt cuts
      export XLING_RUNNING_TEST=$WORK/tests.running
      export PYTEST_ADDOPTS="-p no:cacheprovider --timeout=$TEST_TIMEOUT --junitxml=$WORK/tests.xml ${TESTS[*]}"
      if command -v make > /dev/null; then  # `make test-gpu` itself: it needs no venv (the ids above, not its files)
        run make --no-print-directory test-gpu GPU_PYTHON="$PY" GPU_TESTS=
      else
        say "tests: no make on this machine: pytest as make test-gpu runs it"
        jobs=$(( $(nproc) / 2 )); ((jobs > 8)) && jobs=8; ((jobs < 1)) && jobs=1
        run "$PY" -m pytest -q -m gpu -n "$jobs" --dist loadgroup --durations=10
      fi
      rc=$?
      unset PYTEST_ADDOPTS XLING_RUNNING_TEST
      "$PY" bench/gpu_check.py tests "$WORK/tests.raw.json" "$WORK/tests.xml" --running "$WORK/tests.running" \
        >> "$LOG" 2>&1
      # a failed or erroring test fails the part (pytest's exit status 1); a cut run times out
      end_part tests "$rc" "$WORK/tests.raw.json" "pytest exit status $rc"
    fi ;;
  # --- the workflow on the GPU: make demo GPUS=1 -------------------------------------------------------------
  workflow)
    # the demo's packages beside the tests' (a fresh machine has neither: the first call unpacks .whl)
    if ! missing=$("$PY" -c "import snakemake, fairseq" 2>&1); then
      say "workflow: SKIPPED, ${missing##*$'\n'} (carry .whl-demo, after a call that carried .whl)"
      "$PY" bench/gpu_check.py record "$OUT" workflow skipped 0 --estimate "$est" --note \
        "skipped: ${missing##*$'\n'} (scripts/gpu_node_wheels.sh demo .whl-demo, carried after .whl)" >> "$LOG" 2>&1
    elif begin_part workflow "$est" "$min" "$cap"; then
      rm -rf "$WORK/workflow" && mkdir -p "$WORK/workflow"
      # the Makefile's own command (-o venv: the node has no venv to make), in WORK rather than the tree
      run_to "$WORK/workflow.log" make --no-print-directory -o venv demo GPUS=1 PY="$PY" \
        SNAKEMAKE="$PY -m snakemake --directory $WORK/workflow ${WORKFLOW_DRY[*]}"
      rc=$?
      "$PY" bench/gpu_check.py workflow "$WORK/workflow.raw.json" "$WORK/workflow.log" "$WORK/workflow/results/demo" \
        >> "$LOG" 2>&1
      end_part workflow $rc "$WORK/workflow.raw.json"
    fi ;;
  # --- the fine-tuning grid jobs ---------------------------------------------------------------------
  grid)
    if begin_part grid "$est" "$min" "$cap"; then
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
      rows=$("$PY" bench/gpu_check.py merge-rows "$WORK/grid.raw.json" "${rows_json[@]}" 2>> "$LOG") || rows=0
      end_part grid $rc "$WORK/grid.raw.json" "$rows of ${#GRID_ROWS[@]} row(s) measured"
    fi ;;
  # --- the pretraining step at the paper's shapes, beside the plain step and transformers ---------------------
  pretrain)
    if begin_part pretrain "$est" "$min" "$cap"; then
      rm -f "$WORK/pretrain.raw.json"
      run "$PY" bench/bench_pretrain.py "${PRETRAIN[@]}" "${PRETRAIN_REFERENCE[@]}" --data "$WORK/corpus" \
        --json "$WORK/pretrain.raw.json"
      end_part pretrain $? "$WORK/pretrain.raw.json"
    fi ;;
  # --- the pretraining step's A/Bs, one run each, as many as fit ------------------------------------------
  ab)
    if begin_part ab "$est" "$min" "$cap"; then
      rc=0 runs_json=() part_limit=$LIMIT
      for i in "${!AB_RUNS[@]}"; do
        read -ra switch <<< "${AB_RUNS[$i]}"
        runs_json+=("$WORK/ab.run$i.json")
        rm -f "${runs_json[$i]}"
        LIMIT=$((part_limit - ($(date +%s) - PART_T0)))
        ((LIMIT < min)) && { say "ab: ${LIMIT} s left, not enough for ${AB_RUNS[$i]} and the rest"; break; }
        run "$PY" bench/bench_pretrain.py "${PRETRAIN[@]}" "${switch[@]}" --data "$WORK/corpus" \
          --json "${runs_json[$i]}"
        rc_run=$?
        ((rc == 0)) && rc=$rc_run
        ((rc_run == 124 || rc_run == 137)) && break
      done
      LIMIT=$part_limit
      n=$("$PY" bench/gpu_check.py merge-runs "$WORK/ab.raw.json" "${runs_json[@]}" 2>> "$LOG") || n=0
      end_part ab $rc "$WORK/ab.raw.json" "$n of ${#AB_RUNS[@]} run(s) measured"
    fi ;;
  # --- whole pretraining jobs: bf16 to its end, fp16 stopped by SIGTERM -------------------------------
  jobs)
    if begin_part jobs "$est" "$min" "$cap"; then
      # the jobs' own clock ends 20 s before the limit: a job still running is stopped and recorded
      run "$PY" bench/gpu_check.py jobs "$WORK/jobs.raw.json" --device "$DEVICE" --seconds $((LIMIT - 20))
      end_part jobs $? "$WORK/jobs.raw.json"
    fi ;;
  *) say "unknown part $part (${PARTS_ALL[*]})" ;;
  esac
done

"$PY" bench/gpu_check.py summary "$OUT" $PARTS 2>> "$LOG" | tee -a "$LOG"
verdict=${PIPESTATUS[0]}
say "done: $(left) s of the ${BUDGET} s budget left"
exit "$verdict"
