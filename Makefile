# quiver: `make setup` then `make demo`; `make test` runs the test suite.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
APT_PACKAGES := clang-19 llvm-19 llvm-19-dev lld-19 libomp-19-dev mpich libmpich-dev python3-venv valgrind cmake autoconf make gdb
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help setup apt venv native test test-fast lint demo bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: apt venv native ## install apt packages, the Python package in .venv/, build the tracer and the VSM kernel
	@echo "setup done: run 'source $(VENV)/bin/activate' (or use $(VENV)/bin/trace)"

apt: ## install the toolchain (clang-19, libomp-19, mpich) with apt
	@if dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then echo "apt packages present"; else \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $(APT_PACKAGES); fi

venv: ## create .venv/ and install quiver with its test extras
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[test]"
	$(PY) -m compileall -q quiver formats replay tracer >/dev/null  # what installing a wheel does: with PYTHONDONTWRITEBYTECODE set, every `trace` run would compile quiver's modules again
	$(PY) -m ipykernel install --user --name python3 >/dev/null 2>&1 || true

native: ## build the native tracer libraries and the mapping checker's C kernel (else built on first use)
	$(PY) -c "from quiver.tracer import native; print('tracer built in', native.ensure_built())"
	$(PY) -c "from quiver.replay.mapping import vsm_native; print('VSM kernel built:', vsm_native.library()._name)"
	$(PY) -c "from quiver.formats import batch_scan; lib = batch_scan.library(); print('batch scan built:', lib._name if lib else 'no (numpy fallback)')"

# two xdist workers (a module per worker, longest first): 7-14 min of tests on a fresh clone instead of
# 23 in one process (2026-11-29, quiet and loaded machine); TEST_WORKERS=1 runs them in one process. (The transpose -O1 differential's lost
# rows under two workers were a tracer race, fixed in fe87256.)
TEST_WORKERS ?= 2
test: ## run the whole test suite (real clang/libomp programs and MPI ranks), TEST_WORKERS processes (pytest-xdist, a module per worker)
	$(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

test-fast: ## tests that need no compiler (format, builder, checkers on synthetic logs)
	$(VENV)/bin/pytest -q -p no:cacheprovider -m "not slow"

lint: ## ruff
	$(VENV)/bin/ruff check quiver formats replay tracer tests bench

demo: ## compile, record and analyze a program with a mapping bug (seed 000 Fig. 1)
	@bash examples/demo.sh

bench: ## run the benchmarks; prints a table and writes bench/results.json
	$(PY) -m compileall -q quiver formats replay tracer >/dev/null
	$(PY) bench/run.py
	$(PY) bench/sharded.py --json bench/sharded.json

clean: ## remove build products and logs
	rm -rf build *.egg-info tracer/native/build .pytest_cache examples/out
