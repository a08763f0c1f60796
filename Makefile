# Quick start: `make demo` (whole pipeline on the synthetic testbed) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
CORES ?= all
# A one-GPU workstation: `make demo GPUS=1` puts pretraining and fine-tuning on the GPU
# (config/gpu1.yaml) and lets GPU_JOBS of them share it at once: Snakemake's `gpu` resource then
# counts places on the one GPU (each job asks for 1 and uses the first device). A testbed job takes
# a core and well under 2 GB of GPU memory; the GPU session measures what GPU_JOBS pays best.
GPUS ?= 0
GPU_JOBS ?= 4
# more config overlays, read after the demo's (e.g. CONFIG=config/demo_full_gpu.yaml)
CONFIG ?=
ifeq ($(GPUS),0)
GPU_ARGS :=
else ifeq ($(GPUS),1)
GPU_ARGS := config/gpu1.yaml --resources gpu=$(GPU_JOBS)
else
$(error GPUS=$(GPUS): locally only one GPU is supported (every job would use the first); use the slurm profile)
endif
# wheelhouse: PY names the target Python's version (`make wheelhouse PY=3.12`); default the venv's
WHEELHOUSE_PY = $(if $(findstring /,$(PY)),,--python $(PY))

.PHONY: venv demo demo-full demo-liu bundle report-from-bundle test test-fast test-shuffled test-gpu lint slurm-test dry-run clean-demo wheelhouse

venv:
	@bash scripts/bootstrap.sh

demo: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml $(CONFIG) $(GPU_ARGS) --cores $(CORES) all

# The testbed in the regime where Table 1's findings appear, with 3 pretraining seeds (2 h 45 min on 2 cores)
demo-full: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml config/demo_full.yaml $(CONFIG) $(GPU_ARGS) \
		--cores $(CORES) all

# Liu et al. 2020 on the testbed (its own target; reuses the demo's corpus when `make demo` ran)
demo-liu: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml --cores $(CORES) liu2020

# The demo's results as one archive (results/demo/bundle.tar.gz + its config): what every table and
# figure is made from; runs what is missing of `make demo` and `make demo-liu` first
bundle: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml --cores $(CORES) bundle

# Every table and figure from a bundle, without any upstream job (default: the published demo's)
BUNDLE ?= results-published/demo/bundle.tar.gz
report-from-bundle: venv
	$(SNAKEMAKE) --profile profiles/local --configfile $(BUNDLE:.tar.gz=.config.yaml) --config bundle=$(BUNDLE) \
		--cores $(CORES) report

# The suite on every core (pytest-xdist; tests/conftest.py keeps the end-to-end slice's tests on one
# worker, each other file's on one), the 15 slowest listed at the end. TEST_JOBS=0: one process.
TEST_JOBS ?= auto
TEST_ARGS = -n $(TEST_JOBS) --dist loadgroup --durations=15
test: venv
	$(PY) -m pytest -q $(TEST_ARGS)

# Python (ruff), the rule files' layout (snakefmt) and Snakemake's own checks of the workflow
# (all but the one lint our layout disagrees with: scripts/lint_workflow.py says why)
lint: venv
	$(VENV)/bin/ruff check src tests bench workflow/scripts scripts
	$(VENV)/bin/snakefmt --check Snakefile workflow/rules
	$(PY) scripts/lint_workflow.py --configfile config/demo.yaml
	$(PY) scripts/lint_workflow.py

test-fast: venv
	$(PY) -m pytest -q $(TEST_ARGS) -m "not slow and not slurm"

# The suite in a shuffled order, so that a test that passes only after another one shows itself;
# the seed is printed first, SEED=<n> repeats an order
SEED ?=
test-shuffled: venv
	@seed=$(SEED); seed=$${seed:-$$(date +%s)}; echo "test order: --random-order-seed=$$seed"; \
	$(PY) -m pytest -q $(TEST_ARGS) --random-order-bucket=global --random-order-seed=$$seed

# The GPU paths on one CUDA device (tests/test_gpu.py and the other `gpu`-marked tests); each is
# skipped, with the reason, where CUDA is absent
test-gpu: venv
	$(PY) -m pytest -q -m gpu

# Wheels for a GPU node without internet (docs/cluster.md): run where an index is reachable, then
# scripts/install_offline.sh wheelhouse/py<version> on the node. INTERPRETER=/path/to/python<version>
# (with torch) also builds fairseq's wheel here; otherwise the node compiles it from its source.
wheelhouse: venv
	$(VENV)/bin/python scripts/wheelhouse.py $(WHEELHOUSE_PY) $(if $(INTERPRETER),--interpreter $(INTERPRETER))

slurm-test: venv
	$(PY) -m pytest -q -m slurm

dry-run: venv
	$(SNAKEMAKE) -n --profile profiles/slurm all

clean-demo:
	rm -rf results/demo
