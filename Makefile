# dpgp_audit — every target sets itself up: a fresh machine needs only Python 3.11, make and git.
# Each target installs only what it needs (stamps in .venv/): `make audit` the core package,
# `make lab`/`notebooks`/`sync` the notebooks extra, `make test`/`lint`/... everything.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORE_STAMP   := $(VENV)/.installed-core
NB_STAMP     := $(VENV)/.installed-notebooks
NEURAL_STAMP := $(VENV)/.installed-neural
STAMP        := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.installed-browser
NB_PARAMS ?= tests/notebooks/params
TORCH_VERSION ?= 2.13.0
# PyTorch's CPU-only wheel index, used when reachable. `make test TORCH_INDEX=` skips it and
# installs torch from the default index (on Linux x86_64 PyPI's default wheel is the CUDA build).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
BINDER_VENV  ?= .venv-binder
BOOK_VENV    ?= .venv-book
BOOK_STAMP   := $(BOOK_VENV)/.installed
# make book: where already executed notebooks may be taken from (e.g. build/binder after
# make binder-check, as CI does); a notebook not found there is executed for the book.
BOOK_EXECUTED ?=
BINDER_STAMP := $(BINDER_VENV)/.installed
BINDER_SEED  ?= 11
NB ?=
# `make notebooks` / `binder-check` / `book`: papermill's limit per cell, each notebook's
# limit (coreutils timeout) and the whole run's; a stalled kernel fails the run, never hangs it.
NB_CELL_TIMEOUT ?= 1200
NB_TIMEOUT      ?= 3600
NOTEBOOKS_TIMEOUT ?= 14400
export PYTHONHASHSEED ?= 0

# `make audit` knobs (empty = audit every registered non-planted mechanism)
MECH  ?=
DATA  ?=
Y     ?=
X     ?=
EPS   ?=
DELTA ?=
N     ?=
SEED  ?=
SCHEDULER ?=
JOBS  ?=
# Each value is quoted for the shell: a path or a column name may hold spaces.
AUDIT_ARGS = $(if $(MECH),--mechanism '$(MECH)',--all) $(if $(DATA),--data '$(DATA)') \
             $(if $(Y),--y '$(Y)') $(if $(X),--x '$(X)') $(if $(EPS),--epsilon '$(EPS)') \
             $(if $(DELTA),--delta '$(DELTA)') $(if $(N),--samples '$(N)') \
             $(if $(SEED),--seed '$(SEED)') $(if $(SCHEDULER),--scheduler '$(SCHEDULER)') \
             $(if $(PAIRS),--pairs '$(PAIRS)') $(if $(EVIDENCE),--evidence) \
             $(if $(JOBS),--jobs '$(JOBS)')

# Headless test and audit runs draw with Agg. `lab` and `notebooks` do not set a backend:
# notebooks display their figures explicitly (dpgp_audit.viz.show), whatever the backend.
audit test test-slow test-notebooks test-browser refs bench binder-check: export MPLBACKEND ?= Agg

.PHONY: help install audit audit-thirdparty test test-slow test-notebooks test-browser lint sync lab notebooks \
        refs bench binder-check grade book clean

help:
	@echo "make audit     audit every registered mechanism on the embedded default data"
	@echo "               (or one: make audit MECH=P.1/analytic-gaussian EPS=1 DELTA=1e-5)"
	@echo "               thorough: EVIDENCE=1 lets every generated pair bet, its draws"
	@echo "               following its wealth (mixtures); PAIRS=100 gives each the full cap"
	@echo "               every mechanism: one process per CPU, the same reports (JOBS=1: one)"
	@echo "               installs the core package only; your own code and data:"
	@echo "               make audit MECH=mymech.py:NoisyMean DATA=mydata.csv Y=target [X=a,b]"
	@echo "make audit-thirdparty  build .venv-thirdparty/ (OpenDP, diffprivlib) and .venv-dp4gp/"
	@echo "               (dp4gp 1.01, numpy < 2) and audit examples/third_party/ through the adapters"
	@echo "make test      set up .venv and run the test suite (unit, property, audit, notebooks)"
	@echo "               installs every extra; torch from the CPU-only index (TORCH_INDEX=...)"
	@echo "make test-notebooks  only the notebook tests (papermill + nbval, tiny CI parameters)"
	@echo "make test-browser    JupyterLab and the course site in Chromium (Playwright; not in make test)"
	@echo "make refs      rewrite tests/notebooks/refs/ (strict nbval references) after a change"
	@echo "               (add one: make refs NB=01_smith2018_cloaking)"
	@echo "make lab       JupyterLab on notebooks/ (start at index.ipynb)"
	@echo "make notebooks papermill every notebook with full-scale parameters into build/"
	@echo "make sync      jupytext --sync: bring each notebooks/NN_name.py / .ipynb pair together"
	@echo "make grade NB=00 SUBMISSION=student.ipynb  execute a submission, run the public and"
	@echo "               hidden checks of its exercises, print the scores (JSON in build/grade/)"
	@echo "make book      the course site, executed, into build/book/ (Jupyter Book, Sphinx)"
	@echo "make lint      ruff (incl. numpy legacy-random rule) + notebooks clean and in sync with .py"
	@echo "make binder-check  audit --all and every notebook in a venv built only from binder/"
	@echo "make bench     speed benchmarks (BLAS pinned to one thread)"
	@echo "make clean     remove build outputs and the virtual environments"

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

# The core package alone: all `make audit` needs (no Jupyter, no PyTorch).
$(CORE_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

# The notebooks extra and the python3 kernel: `make lab`, `make notebooks`, `make sync`.
$(NB_STAMP): pyproject.toml $(CORE_STAMP)
	$(PY) -m pip install -q -e ".[notebooks]"
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# PyTorch for the neural extra, never a silent GPU build (binder/install-torch, shared with
# Binder's postBuild): the CPU-only index where reachable, otherwise the plain package.
$(NEURAL_STAMP): pyproject.toml $(CORE_STAMP) binder/install-torch
	PYTHON=$(PY) TORCH_VERSION=$(TORCH_VERSION) TORCH_INDEX="$(TORCH_INDEX)" bash binder/install-torch
	$(PY) -m pip install -q -e ".[neural]"
	touch $@

# Everything for the test suite, lint and benchmarks.
$(STAMP): pyproject.toml $(NB_STAMP) $(NEURAL_STAMP)
	$(PY) -m pip install -q -e ".[notebooks,test,dev,neural]"
	touch $@

install: $(STAMP)

# Through make, a violation (the program's exit status 1) or no verdict (4) becomes make's own
# status 2; scripts that need the program's codes call `.venv/bin/python -m dpgp_audit audit`.
audit: $(CORE_STAMP)
	$(PY) -m dpgp_audit audit $(AUDIT_ARGS)

# Third-party DP libraries audited through dpgp_audit.adapters (catalogue A.10), never in the
# core: OpenDP and diffprivlib beside the kit in .venv-thirdparty/, dp4gp 1.01 (numpy < 2) in
# .venv-dp4gp/, reached through the virtualenv bridge. Each example is audited by the CLI
# with the default path; a violation is reported, not a failure of this target.
TP_VENV  ?= .venv-thirdparty
TP_STAMP := $(TP_VENV)/.installed
DP4GP_VENV  ?= .venv-dp4gp
DP4GP_STAMP := $(DP4GP_VENV)/.installed
TP_SEED ?= 1
TP_EXAMPLES ?= opendp_sum.py:laplace_sum opendp_sum.py:gaussian_sum diffprivlib_tools.py:mean \
               diffprivlib_tools.py:var dp4gp_bridge.py:cloaking dp4gp_bridge.py:cloaking_overshoot

$(TP_STAMP): pyproject.toml examples/third_party/requirements.txt
	$(PYTHON) -m venv $(TP_VENV) || python3 -m venv $(TP_VENV)
	$(TP_VENV)/bin/python -m pip install -q --upgrade pip
	$(TP_VENV)/bin/python -m pip install -q -e . -r examples/third_party/requirements.txt
	touch $@

$(DP4GP_STAMP): examples/third_party/requirements-dp4gp.txt
	$(PYTHON) -m venv $(DP4GP_VENV) || python3 -m venv $(DP4GP_VENV)
	$(DP4GP_VENV)/bin/python -m pip install -q -r examples/third_party/requirements-dp4gp.txt
	$(DP4GP_VENV)/bin/python -m pip install -q --no-deps dp4gp==1.01
	touch $@

audit-thirdparty: export MPLBACKEND ?= Agg
audit-thirdparty: $(TP_STAMP) $(DP4GP_STAMP)
	mkdir -p build/thirdparty
	for ex in $(TP_EXAMPLES); do \
	  stem=$$(echo $$ex | tr ':/' '__'); \
	  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(TP_VENV)/bin/python -m dpgp_audit audit \
	    --mechanism examples/third_party/$$ex --seed $(TP_SEED) --no-progress \
	    --json build/thirdparty/$$stem.json; \
	  code=$$?; if [ $$code -gt 1 ] && [ $$code -ne 4 ]; then exit $$code; fi; \
	done
	@echo "audit-thirdparty: reports in build/thirdparty/ (exit 1 = a violation was found, 4 = no verdict)"

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not browser" tests

# JupyterLab in a real browser (tests/browser/): Chromium from the system or from
# `.venv/bin/python -m playwright install chromium`; skips with a message without one.
$(BROWSER_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e ".[browser]"
	touch $@

test-browser: $(BROWSER_STAMP)
	@test -f build/book/index.html || $(MAKE) book
	$(PY) -m pytest -q -m browser tests/browser

test-notebooks: $(STAMP)
	$(PY) -m pytest -q -m notebooks tests

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow tests

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m dpgp_audit.devtools.check_notebooks --paired notebooks/*.ipynb notebooks/answers/*.ipynb

# Notebooks are edited as text: notebooks/NN_name.py (jupytext percent format) is paired
# with NN_name.ipynb (notebooks/jupytext.toml); the newer side of each pair wins.
sync: $(NB_STAMP)
	$(VENV)/bin/jupytext --sync notebooks/*.ipynb notebooks/answers/*.ipynb

lab: $(NB_STAMP)
	cd notebooks && $(abspath $(VENV))/bin/jupyter lab index.ipynb

# Paper notebooks (01-04) also write build/full/NN_name.repro.json (their `repro_json`
# parameter); the reproduction module turns those into build/full/REPRODUCTION.md.
# `python -m dpgp_audit.experiments.reproduction --write-docs` copies the table to docs/reproductions.md.
# Each notebook runs under `timeout` (NB_TIMEOUT, at most what is left of NOTEBOOKS_TIMEOUT)
# and papermill's --execution-timeout per cell; widgets are static (DPGP_AUDIT_WIDGETS).
notebooks: export DPGP_AUDIT_WIDGETS = static
notebooks: $(NB_STAMP)
	mkdir -p build/full
	rm -f build/full/*.repro.json
	start=$$(date +%s); \
	for nb in notebooks/*.ipynb notebooks/answers/*.ipynb; do \
	  stem=$$(basename $$nb .ipynb); \
	  left=$$(( $(NOTEBOOKS_TIMEOUT) - $$(date +%s) + start )); \
	  if [ $$left -le 0 ]; then echo "make notebooks: over NOTEBOOKS_TIMEOUT=$(NOTEBOOKS_TIMEOUT) s before $$stem" >&2; exit 1; fi; \
	  limit=$$(( left < $(NB_TIMEOUT) ? left : $(NB_TIMEOUT) )); \
	  extra=""; \
	  if grep -q '"repro_json' "$$nb"; then extra="-p repro_json $(CURDIR)/build/full/$$stem.repro.json"; fi; \
	  t0=$$(date +%s); \
	  timeout --kill-after=30 $$limit $(VENV)/bin/papermill "$$nb" "build/full/$$stem.ipynb" -k python3 \
	    --cwd notebooks -f "notebooks/full_scale/$$stem.yaml" $$extra \
	    --execution-timeout $(NB_CELL_TIMEOUT) --start-timeout 120 --log-level WARNING; \
	  rc=$$?; \
	  if [ $$rc -eq 124 ] || [ $$rc -eq 137 ]; then echo "make notebooks: $$stem passed its $$limit s limit" >&2; exit 1; fi; \
	  [ $$rc -eq 0 ] || exit $$rc; \
	  echo "$$stem: $$(( $$(date +%s) - t0 )) s"; \
	done
	$(PY) -m dpgp_audit.experiments.reproduction --records build/full \
	  --out build/full/REPRODUCTION.md

# Grading: the submission runs with the notebook's CI parameters (GRADE_PARAMS=) in a fresh
# kernel; public checks (dpgp_audit/exercises/nbNN.py) and hidden ones (tests/exercises/hidden/).
SUBMISSION ?=
GRADE_PARAMS ?= $(firstword $(filter-out %_answers.yaml,$(wildcard $(NB_PARAMS)/$(NB)_*.yaml)))
grade: $(NB_STAMP)
	@if [ -z "$(NB)" ] || [ -z "$(SUBMISSION)" ]; then \
	  echo "usage: make grade NB=00 SUBMISSION=path/to/student.ipynb" >&2; exit 2; fi
	$(PY) -m dpgp_audit.exercises.grading "$(SUBMISSION)" --notebook $(NB) \
	  --hidden tests/exercises/hidden $(if $(GRADE_PARAMS),--params $(GRADE_PARAMS)) \
	  --json build/grade/$(basename $(notdir $(SUBMISSION))).json

refs: $(STAMP)
	$(PY) -m tests.notebooks.harness --write-refs $(NB)

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) benchmarks/requirements.txt
	$(PY) -m pip install -r benchmarks/requirements.txt
	$(PY) -m pip install --no-deps dp4gp==1.01
	touch $@

bench: $(BENCH_STAMP)
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) benchmarks/run_all.py

# Binder: a virtual environment built only from binder/ (requirements.txt, then postBuild),
# rebuilt when those files change; there `audit --all` must find no violation and every
# notebook must run with its CI parameters (tests/notebooks/params/*.yaml).
$(BINDER_STAMP): binder/requirements.txt binder/postBuild binder/install-torch binder/runtime.txt
	rm -rf $(BINDER_VENV)
	$(PYTHON) -m venv $(BINDER_VENV) || python3 -m venv $(BINDER_VENV)
	$(BINDER_VENV)/bin/python -m pip install -q -r binder/requirements.txt
	PATH="$(CURDIR)/$(BINDER_VENV)/bin:$$PATH" bash binder/postBuild
	$(BINDER_VENV)/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

binder-check: export DPGP_AUDIT_WIDGETS = static
binder-check: $(BINDER_STAMP)
	$(BINDER_VENV)/bin/python -m dpgp_audit audit --all --no-progress --seed $(BINDER_SEED)
	$(BINDER_VENV)/bin/python -c "import torch; print('binder-check: torch', torch.__version__)"
	mkdir -p build/binder
	for nb in notebooks/*.ipynb notebooks/answers/*.ipynb; do \
	  stem=$$(basename $$nb .ipynb); \
	  JUPYTER_PATH="$(CURDIR)/$(BINDER_VENV)/share/jupyter" PYTHONPATH= \
	  timeout --kill-after=30 1200 $(BINDER_VENV)/bin/papermill "$$nb" "build/binder/$$stem.ipynb" \
	    -k python3 --cwd build/binder -f "$(NB_PARAMS)/$$stem.yaml" --execution-timeout 600 \
	    --start-timeout 120 --log-level WARNING || exit 1; \
	done
	@grep -q "PyTorch available: True" build/binder/04_raisa_dpconvcnp.ipynb || \
	  { echo "binder-check: notebook 04 ran without PyTorch (DPConvCNP sections skipped)" >&2; exit 1; }
	@echo "binder-check: audit --all and every notebook ran in $(BINDER_VENV), 04 with PyTorch"

# The course site: notebooks executed with their CI parameters (papermill in .venv, widgets
# static, timeouts; or taken from BOOK_EXECUTED), the glossary and the user guide (docs/),
# rendered by Jupyter Book 1 (Sphinx) from its own venv into build/book/ (open index.html).
$(BOOK_STAMP): book/requirements.txt
	rm -rf $(BOOK_VENV)
	$(PYTHON) -m venv $(BOOK_VENV) || python3 -m venv $(BOOK_VENV)
	$(BOOK_VENV)/bin/python -m pip install -q -r book/requirements.txt
	touch $@

book: export DPGP_AUDIT_WIDGETS = static
book: export MPLBACKEND ?= Agg
book: $(NB_STAMP) $(BOOK_STAMP)
	rm -rf build/book-src build/book
	mkdir -p build/book-src/notebooks/answers build/book-src/docs
	cp book/_config.yml book/_toc.yml build/book-src/
	cp docs/*.md build/book-src/docs/
	cp notebooks/GLOSSARY.md build/book-src/notebooks/
	start=$$(date +%s); \
	for nb in notebooks/*.ipynb notebooks/answers/*.ipynb; do \
	  stem=$$(basename $$nb .ipynb); dest=build/book-src/$$(dirname $$nb)/$$stem.ipynb; \
	  if [ -n "$(BOOK_EXECUTED)" ] && [ -f "$(BOOK_EXECUTED)/$$stem.ipynb" ]; then \
	    cp "$(BOOK_EXECUTED)/$$stem.ipynb" "$$dest"; echo "book: $$stem from $(BOOK_EXECUTED)"; \
	  else \
	    t0=$$(date +%s); \
	    timeout --kill-after=30 $(NB_TIMEOUT) $(VENV)/bin/papermill "$$nb" "$$dest" -k python3 \
	      --cwd build/book-src -f "$(NB_PARAMS)/$$stem.yaml" --execution-timeout $(NB_CELL_TIMEOUT) \
	      --start-timeout 120 --log-level WARNING --no-progress-bar || exit 1; \
	    echo "book: $$stem executed in $$(( $$(date +%s) - t0 )) s"; \
	  fi; \
	done; \
	t0=$$(date +%s); \
	$(BOOK_VENV)/bin/jupyter-book build build/book-src --builder html --path-output build/book-out \
	  --keep-going || exit 1; \
	mv build/book-out/_build/html build/book || exit 1; rm -rf build/book-out; \
	echo "book: rendered in $$(( $$(date +%s) - t0 )) s, $$(( $$(date +%s) - start )) s in all:" \
	     "build/book/index.html"

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache $(VENV) $(BINDER_VENV) $(BOOK_VENV) \
	  $(TP_VENV) $(DP4GP_VENV) *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
