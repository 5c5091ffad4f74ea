# transformers-lite: `make demo` and `make test` are the two commands a newcomer needs.
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test demo bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q "$(TORCH_SPEC)"
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

test: setup
	$(BIN)/python -m pytest -n 2

demo: setup
	$(BIN)/python examples/demo.py

bench: setup
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) outputs .pytest_cache
