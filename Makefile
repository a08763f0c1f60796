# Quick start: `make demo` (whole pipeline on the synthetic testbed) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake
CORES ?= all

.PHONY: venv demo demo-full demo-liu bundle report-from-bundle test test-fast lint slurm-test dry-run clean-demo

venv:
	@bash scripts/bootstrap.sh

demo: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml --cores $(CORES) all

# The testbed in the regime where Table 1's findings appear, with 3 pretraining seeds (2 h 45 min on 2 cores)
demo-full: venv
	$(SNAKEMAKE) --profile profiles/local --configfile config/demo.yaml config/demo_full.yaml --cores $(CORES) all

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

test: venv
	$(PY) -m pytest -q

# Python (ruff), the rule files' layout (snakefmt) and Snakemake's own checks of the workflow
# (all but the one lint our layout disagrees with: scripts/lint_workflow.py says why)
lint: venv
	$(VENV)/bin/ruff check src tests bench workflow/scripts scripts
	$(VENV)/bin/snakefmt --check Snakefile workflow/rules
	$(PY) scripts/lint_workflow.py --configfile config/demo.yaml
	$(PY) scripts/lint_workflow.py

test-fast: venv
	$(PY) -m pytest -q -m "not slow and not slurm"

slurm-test: venv
	$(PY) -m pytest -q -m slurm

dry-run: venv
	$(SNAKEMAKE) -n --profile profiles/slurm all

clean-demo:
	rm -rf results/demo
