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
	$(BIN)/pip install -q $(TORCH_SPEC)
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

test: setup
	$(BIN)/python -m pytest -n 2

demo: setup
	$(BIN)/python examples/demo.py

bench: setup  # needs ../shared/data (or TLITE_DATA_DIR); about 15 minutes on 2 cores
	$(BIN)/python benchmarks/bench_tokenize.py
	$(BIN)/python benchmarks/bench_gpt.py all
	$(BIN)/python benchmarks/bench_classifier.py

clean:
	rm -rf $(VENV) outputs .pytest_cache
