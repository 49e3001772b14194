# pelctl developer entry points. `make demo` and `make test` work on a fresh Debian machine
# with only Python 3.11+: they install redis-server (apt) and the locked Python deps.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SPARK_STAMP := $(VENV)/.installed-spark
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup setup-spark redis tools demo demo-down test test-fast lint typecheck docs bench mutate clean

redis:  ## install redis-server (and redis-cli) if missing
	@command -v redis-server >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null; }

tools:  ## what the suite needs from the machine (apt packages, Redis 8.6 built and cached)
	bash tools/install-tools.sh

$(STAMP): pyproject.toml requirements.lock
	@[ -x $(BIN)/python ] || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps -e .
	@# byte-compile now: start-up time matters, and PYTHONDONTWRITEBYTECODE may be set
	$(BIN)/python -m compileall -q pelctl
	@touch $@

$(SPARK_STAMP): $(STAMP) requirements-spark.lock
	$(BIN)/python -m pip install -q -r requirements-spark.lock
	@touch $@

setup: redis $(STAMP)

setup-spark: setup $(SPARK_STAMP)

demo: setup  ## start the throwaway demo server with its incident and inspect it
	@$(BIN)/pelctl demo up
	@echo
	PELCTL_URL=$$($(BIN)/pelctl demo up --print-url) $(BIN)/pelctl inspect orders

demo-down:
	$(BIN)/pelctl demo down

# `tools` installs what the suite needs (tools/install-tools.sh, the script .ci/run relies on
# too), so a newcomer's `make test` skips nothing. -rs lists every skipped test with its
# reason; with CI set (.ci/run) any skip fails the run. The linter and the type checker run
# first; the layer contracts are a test (tests/unit/test_layers.py).
test: tools setup-spark  ## the linter, the type checker and the whole suite, as CI runs it
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider --durations=25

# mypy on the package, settings in pyproject.toml ([tool.mypy]). With the Spark extra
# installed, so pelctl/spark is checked against pyspark's own annotations.
typecheck: setup-spark  ## the type checker on the package
	$(BIN)/mypy

test-fast: setup
	$(BIN)/python -m pytest -q -rs -x -m "not slow and not spark"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

docs: setup  ## regenerate docs/commands.md and completions/ from the typer app, and the console examples of the README, getting started and trace pages from the demo
	$(BIN)/python tools/docs_reference.py --write

bench: setup
	$(BIN)/python -m benchmarks

# Mutation testing (mutmut), not part of `make test` or CI: `make mutate` runs every module
# in tools/mutate.py; `make mutate MODULE=histogram` (or "histogram scan") only those.
# One mutant at a time (a shared machine); `make mutate JOBS=2` for more.
# Scores and survivors: docs/testing.md.
MODULE ?=
JOBS ?= 1
mutate: setup  ## mutation scores of the core modules (see docs/testing.md)
	$(BIN)/python tools/mutate.py --jobs $(JOBS) $(MODULE)

lock:  ## refresh the lock files (needs network)
	$(BIN)/python -m pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 -o requirements.lock --no-header -q
	$(BIN)/uv pip compile pyproject.toml --extra dev --extra spark --python-version 3.11 -o requirements-spark.lock --no-header -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache .mutate
