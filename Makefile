# Two commands set up everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider tests

demo: $(STAMP)
	$(BIN)/warmbo demo

bench: $(STAMP)
	$(BIN)/python bench/core.py

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info warmbo-demo
