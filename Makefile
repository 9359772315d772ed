# dpgp_audit — every target sets itself up: a fresh machine needs only Python 3.11, make and git.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB_PARAMS ?= tests/notebook_params
TORCH_VERSION ?= 2.13.0
NB ?=
export MPLBACKEND ?= Agg
export PYTHONHASHSEED ?= 0

# `make audit` knobs (empty = audit every registered non-planted mechanism)
MECH  ?=
EPS   ?=
DELTA ?=
N     ?=
SEED  ?=
AUDIT_ARGS = $(if $(MECH),--mechanism $(MECH),--all) $(if $(EPS),--epsilon $(EPS)) \
             $(if $(DELTA),--delta $(DELTA)) $(if $(N),--samples $(N)) $(if $(SEED),--seed $(SEED))

.PHONY: help install audit test test-slow test-notebooks lint lab notebooks refs bench clean

help:
	@echo "make audit     audit every registered mechanism on the embedded default data"
	@echo "               (or one: make audit MECH=P.1/analytic-gaussian EPS=1 DELTA=1e-5)"
	@echo "make test      set up .venv and run the test suite (unit, property, audit, notebooks)"
	@echo "make test-notebooks  only the notebook tests (papermill + nbval, tiny CI parameters)"
	@echo "make refs      rewrite tests/notebook_refs/ (strict nbval references) after a change"
	@echo "               (add one: make refs NB=01_smith2018_cloaking)"
	@echo "make lab       JupyterLab on notebooks/"
	@echo "make notebooks papermill every notebook with full-scale parameters into build/"
	@echo "make lint      ruff (incl. numpy legacy-random rule) + notebooks stored without outputs"
	@echo "make bench     speed benchmarks (BLAS pinned to one thread)"
	@echo "make clean     remove build outputs and the virtual environment"

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of PyTorch first: an unpinned `torch` would pull the newest CUDA build (GBs).
	$(PY) -m pip install -q "torch==$(TORCH_VERSION)"
	$(PY) -m pip install -q -e ".[notebooks,test,dev,neural]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

install: $(STAMP)

audit: $(STAMP)
	$(PY) -m dpgp_audit audit $(AUDIT_ARGS)

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

test-notebooks: $(STAMP)
	$(PY) -m pytest -q -m notebooks tests

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m dpgp_audit.devtools.check_notebooks notebooks/*.ipynb notebooks/answers/*.ipynb

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

notebooks: $(STAMP)
	mkdir -p build/full
	for nb in notebooks/*.ipynb notebooks/answers/*.ipynb; do \
	  stem=$$(basename $$nb .ipynb); \
	  $(VENV)/bin/papermill "$$nb" "build/full/$$stem.ipynb" -k python3 --cwd notebooks \
	    -f "notebooks/full_scale/$$stem.yaml" || exit 1; \
	done

refs: $(STAMP)
	$(PY) -m tests.notebook_harness --write-refs $(NB)

bench: $(STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) benchmarks/run_all.py

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache $(VENV) *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
