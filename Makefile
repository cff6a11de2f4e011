# sparqlab: `make reproduce` and `make test` work on a fresh machine with nothing but Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Wheels built once and kept between runs (CI keeps this folder): llama-cpp-python (scripts/llama_cpp_wheel.sh)
WHEELS := $(or $(SPARQLAB_CI_CACHE),$(HOME)/.cache/sparqlab-ci)/wheels

.PHONY: setup test lint reproduce reproduce-real kg bench clean lab check-gold check-mutations

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml setup.py scripts/llama_cpp_wheel.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet pip==26.3
	# llama-cpp-python, the real model's server: its wheel built once into $(WHEELS) (the log says built or cached)
	scripts/llama_cpp_wheel.sh $(BIN)/pip "$(WHEELS)"
	# torch first and pinned: the CPU build on disk, never a CUDA build pulled in by another package.
	$(BIN)/pip install --quiet torch==2.13.0 -c constraints.txt
	# the package with every extra, at the pinned versions (a missing pin for a declared dependency fails here)
	# (llama-cpp-python only from the wheel above: never a second, silent 20-minute build from its source)
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-dev.txt -c constraints.txt -e '.[all]' \
		--find-links "$(WHEELS)" --only-binary llama-cpp-python
	touch $(STAMP)

# Three worker processes (pytest-xdist) on the project's 2-core machines: the suite waits on servers, subprocesses
# and notebook kernels as much as on CPU (two workers kept the cores ~55 % busy). `make test PYTEST_WORKERS=0` runs
# it in one process. `--dist worksteal`: a worker that runs out of tests takes some from a busy one, so the long
# notebook and install tests do not leave one worker finishing alone.
PYTEST_WORKERS ?= 3

# PYTHONDONTWRITEBYTECODE emptied (a set one would otherwise reach every process the suite starts): the suite starts
# hundreds of Python processes that import sparqlab from lib/ (CLI calls, notebook kernels, servers, jobs) and each
# worker rewrites every test module; with the variable set, each of them compiles from source again (0.4-1.3 s of
# CPU per process, ~7 s per worker). The bytecode goes to __pycache__ folders, which git ignores.
test: setup
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

# ruff over everything; mypy over the packages [tool.mypy] in pyproject.toml names
lint: setup
	$(BIN)/ruff check lib tests benchmarks scripts
	$(BIN)/mypy

kg: setup
	$(BIN)/sparqlab kg build movies

reproduce: setup kg
	HF_HUB_OFFLINE=1 $(BIN)/sparqlab reproduce

# Every notebook against the bundled SmolLM2-135M served here by llama.cpp (~30 min on 2 cores; docs/performance.md).
reproduce-real: setup kg
	HF_HUB_OFFLINE=1 $(BIN)/sparqlab reproduce --real

lab: setup kg
	# JupyterLab on 127.0.0.1 serving the checkout; prints the URL (with its token) to open in a browser.
	$(BIN)/sparqlab lab

# Every gold answer set against independent sources (MetaQA's answer files; the raw KB for MCQA-style questions).
check-gold: setup kg
	$(BIN)/python scripts/check_metaqa_gold.py
	$(BIN)/python scripts/check_mcqa_gold.py

# The validity tests fail on the mutations they guard against (scripts/check_mutations.py lists them).
check-mutations: setup kg
	$(BIN)/python scripts/check_mutations.py

bench: setup kg
	$(BIN)/python benchmarks/kg_bench.py
	$(BIN)/python benchmarks/concurrency.py

clean:
	rm -rf .cache runs
