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

.PHONY: venv demo demo-full demo-real demo-liu bundle report-from-bundle check-bundle targets refit test test-fast test-shuffled test-gpu gpu-check lint slurm-test dry-run clean-demo wheelhouse

venv:
	@bash scripts/bootstrap.sh

demo: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml $(CONFIG) $(GPU_ARGS) --cores $(CORES) all

# The testbed with 4,000-update models (the length English chose) and 3-15 pretraining seeds a row (48
# models; with `make bundle CONFIG=config/demo_full.yaml` 417 jobs, measured 7 h 20 min of wall over
# four sessions on 2 idle cores; docs/demo.md; its published bundle: results-published/demo_full/)
demo-full: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml config/demo_full.yaml $(CONFIG) $(GPU_ARGS) \
		--cores $(CORES) all

# The paper's central ablation on real languages (config/real.yaml; docs/real.md): its offline mirror
# filled from SHARED_DATA's byte-identical copies (ELTeC, UD, Tatoeba) and from deb.debian.org
# (FreeDict's Debian packages), then the whole run; the same command resumes it
SHARED_DATA ?= ../shared/data
demo-real: venv
	$(PY) -m xling.download.mirror --configfile config/real.yaml --from $(SHARED_DATA) --fetch deb.debian.org
	$(SNAKEMAKE) --profile profiles/local --configfile config/real.yaml $(CONFIG) $(GPU_ARGS) --cores $(CORES) all

# Liu et al. 2020 on the testbed (its own target; reuses the demo's corpus when `make demo` ran)
demo-liu: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml --cores $(CORES) liu2020

# Section 5 on transformers checkpoints, on the testbed: the testbed's text, tiny untrained BERT,
# CamemBERT, m-BERT, XLM-R, DistilBERT, ELECTRA, ALBERT, DeBERTa-v2 and XLM checkpoints with
# tokenizers trained on it (kept once made), then the
# target section5_external (no pretraining, no fine-tuning): results/demo/report/external/
EXTERNAL_TEXT := $(foreach l,en fr,results/demo/corpus/$(l)/wiki.train.txt)
demo-external: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml --cores $(CORES) $(EXTERNAL_TEXT)
	$(PY) scripts/make_tiny_checkpoints.py results/demo/external_models --every-kind $(foreach l,en fr,\
		--text $(l)=results/demo/corpus/$(l)/wiki.train.txt)
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml config/demo_external.yaml --cores $(CORES) \
		section5_external

# The demo's results as one archive (results/demo/bundle.tar.gz + its config): what every table and
# figure is made from; runs what is missing of `make demo` and `make demo-liu` first
# (CONFIG=config/demo_full.yaml: demo-full's, results/demo_full/bundle.tar.gz)
bundle: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml $(CONFIG) --cores $(CORES) bundle

# Every table and figure from a bundle, without any upstream job (default: the published demo's)
BUNDLE ?= results-published/demo/bundle.tar.gz
report-from-bundle: venv
	$(SNAKEMAKE) --profile profiles/local --configfile $(BUNDLE:.tar.gz=.config.yaml) --config bundle=$(BUNDLE) \
		--cores $(CORES) report

# The same in a fresh temporary directory, then every table and figure CSV compared byte for byte
# with those the bundle carries (its run's own report): PASS or FAIL, each differing file named
check-bundle: venv
	$(PY) -m xling.report.rebuild $(BUNDLE) --cores $(CORES)

# Every named target of the paper config, or of CONFIGFILE's overlays on it (`make targets
# CONFIGFILE=config/demo.yaml`): what it builds and the jobs `snakemake -n <target>` plans here
CONFIGFILE ?=
targets: venv
	$(PY) -m xling.targets $(if $(CONFIGFILE),--configfile $(CONFIGFILE))

# Every fine-tuning job behind TARGET again (a Table 1 row or pair, or all): --forcerun with the
# config's fine-tuning rules (`python -m xling.targets --finetune-rules`: finetune_grid_<task>, a
# batch size's cells in one job). RETRAIN=1 retrains the target's models too; CONFIGFILE as for `make targets`; PROFILE: slurm
# (the cluster) or profiles/local; ARGS: more snakemake options (ARGS=-n: what it would run)
TARGET ?=
PROFILE ?= slurm
refit: venv
	@test -n "$(TARGET)" || { echo "make refit: name the target, e.g. make refit TARGET=table1_row_sep_emb" >&2; exit 2; }
	rules="$$($(PY) -m xling.targets --finetune-rules $(if $(CONFIGFILE),--configfile $(CONFIGFILE)))" && \
	$(SNAKEMAKE) --profile $(PROFILE) $(if $(CONFIGFILE),--configfile $(CONFIGFILE)) $(ARGS) \
		--forcerun $(if $(RETRAIN),pretrain) $$rules -- $(TARGET)

# The suite on every core (pytest-xdist; tests/conftest.py keeps the end-to-end slice's tests on one
# worker, each other file's on one), the 15 slowest listed at the end. One worker more than cores:
# the SLURM tests and the jobs' exits wait, and the extra worker takes that time (on 2 cores, 3
# workers: 484 s against 499 s for 2, docs/benchmarks.md). TEST_JOBS=0: one process.
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$((n + 1)))
TEST_ARGS = -n $(TEST_JOBS) --dist loadgroup --durations=15
test: venv
	$(PY) -m pytest -q $(TEST_ARGS)

# Python (ruff), the package's types (mypy; its settings in pyproject.toml), the rule files' layout
# (snakefmt) and Snakemake's own checks of the workflow (all but the one lint our layout disagrees
# with: scripts/lint_workflow.py says why)
lint: venv
	$(VENV)/bin/ruff check src tests bench workflow/scripts scripts
	$(VENV)/bin/mypy src/xling
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

# The GPU paths on one CUDA device: the `gpu`-marked tests of GPU_TESTS (tests/test_gpu_check.py checks
# they hold every one), each skipped, with the reason, where CUDA is absent. It needs no venv: a GPU
# node's own Python runs it with the carried packages on PYTHONPATH (`make test-gpu GPU_PYTHON=python3`,
# docs/benchmarks.md); by default the venv's Python where there is one, else python3.
# GPU_TEST_JOBS pytest-xdist workers share the one GPU (half the cores, at most 8: a 16-core node runs
# 8 tests at once, 2 torch threads each; 0, and below 4 cores: one process); tests/conftest.py gives each GPU test its own
# group and starts the slow ones first, and what several need is built once (support.session).
# Inductor's and Triton's compiled kernels go to GPU_CACHE: the workers share what they compile, and
# a second run on the machine finds it (a fresh node starts with it empty).
GPU_PYTHON ?= $(if $(wildcard $(PY)),$(PY),python3)
GPU_TESTS ?= tests/test_gpu.py tests/test_pretrain_gpu.py tests/test_finetune_grid.py tests/test_finetune.py
GPU_TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); n=$$((n / 2)); echo $$((n < 2 ? 0 : (n > 8 ? 8 : n))))
GPU_CACHE ?= $(HOME)/.cache/xling-gpu-tests
test-gpu:
	PYTHONPATH=src$(if $(PYTHONPATH),:$(PYTHONPATH)) TORCHINDUCTOR_CACHE_DIR=$(GPU_CACHE)/inductor \
	TRITON_CACHE_DIR=$(GPU_CACHE)/triton TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1 \
	$(GPU_PYTHON) -m pytest -q -m gpu $(if $(filter 0,$(GPU_TEST_JOBS)),,-n $(GPU_TEST_JOBS) --dist loadgroup) \
	--durations=10 $(GPU_TESTS)

# Every GPU claim in parts by value, the GPU tests first, then make demo GPUS=1, then the pretraining
# A/Bs (bench/gpu_check.sh, docs/benchmarks.md: a window's two calls): on a GPU node with the carried
# wheels; DEVICE=cpu runs the same parts at tiny shapes (OUT: where the JSON and the summary go)
gpu-check:
	bash bench/gpu_check.sh

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
