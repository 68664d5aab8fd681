# Two commands set up everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: system-packages test demo bench bench-peers bench-transfer bench-core bench-threads lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# Real parts the tests use, from Debian's packages, installed here when missing (as root, as in CI;
# otherwise the message says what to install): a PostgreSQL server (tests/conftest.py starts one) and
# headless Chromium (tests/test_report_render.py renders the HTML report).
system-packages:
	@missing=""; \
	command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="postgresql"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "make test: missing $$missing: sudo apt-get install $$missing" >&2; \
		fi; \
	fi

# The suite in TEST_WORKERS processes (pytest-xdist), a test file per process at a time (module
# fixtures, one PostgreSQL server per process): 945 s in one process on 2 cores, 568 s in two.
TEST_WORKERS ?= 2
test: $(STAMP) system-packages
	$(BIN)/python -m pytest -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile tests

demo: $(STAMP)
	$(BIN)/warmbo demo

# The benchmark suite (bench/README.md): warmbo alone, full sizes, under 10 minutes.
bench: $(STAMP)
	$(BIN)/python bench/suite.py

# The same with BoTorch and Optuna alternating with warmbo. torch==2.13.0 is installed first, on its
# own, so that botorch's torch requirement is already met (any other torch pulls gigabytes of CUDA).
bench-peers: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev,peers]"
	$(BIN)/python bench/suite.py --peers

# Leave-one-task-out transfer on HPOBench's MLP grids and the project's SVM grids (bench/metadata/),
# and seconds per ask with 50 sources (bench/results/transfer.json; about 2 hours, resumable, not in `make bench`).
bench-transfer: $(STAMP)
	$(BIN)/python bench/suite.py --section transfer

# Micro-benchmarks of the GP update, prediction and acquisition maximisation (bench/results/core.json).
bench-core: $(STAMP)
	$(BIN)/python bench/core.py

# warmbo's one-BLAS-thread policy against the BLAS default, in one process (bench/results/blas_threads.json).
bench-threads: $(STAMP)
	$(BIN)/python bench/blas_threads.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info warmbo-demo
