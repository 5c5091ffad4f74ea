# transformers-lite: `make demo` and `make test` are the two commands a newcomer needs.
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup browser test test-slow test-floor lint docs demo bench bench-speed screenshots clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q $(TORCH_SPEC)
	$(BIN)/pip install -q -e '.[all,dev]'
	touch $(STAMP)

# the browser tests drive Debian's headless Chromium; installed here when missing (needs root and apt-get)
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing chromium + chromium-driver (browser tests)"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	     (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1)) || \
	    echo "warning: could not install chromium; the browser tests will be skipped"; \
	  else echo "note: chromium + chromium-driver are not installed (root + apt-get needed); the browser tests will be skipped"; fi; \
	fi

# the default run leaves out the tests marked slow (the example notebooks, a budget run, two shell round trips): `make test-slow`
# runs them, and CI runs both
test: lint browser
	$(BIN)/python -m pytest -n 2 --durations=15 -m "not slow"

test-slow: setup browser
	$(BIN)/python -m pytest -n 2 --durations=15 -m slow

lint: setup
	$(BIN)/ruff check src tests benchmarks experiments examples
	$(BIN)/ruff format --check src tests benchmarks experiments examples
	$(BIN)/mypy

# the suite on the oldest Python and torch that pyproject.toml admits, in their own virtualenv (.venv-floor):
# proves the floor. Not part of `make test`: PyPI's torch for Linux is a CUDA build (about 3 GB with its
# libraries); FLOOR_PYTHON names the interpreter, FLOOR_TORCH may carry pip options (a CPU index where reachable)
# (transformers, which only the GPT-2 tests use, needs torch 2.6 from its release 5 on)
FLOOR_PYTHON ?= python3.10
FLOOR_TORCH ?= torch==2.5.1
test-floor:
	test -x .venv-floor/bin/python || $(FLOOR_PYTHON) -m venv .venv-floor
	.venv-floor/bin/pip install -q $(FLOOR_TORCH)
	.venv-floor/bin/pip install -q -e '.[all,dev]' 'transformers<5'
	.venv-floor/bin/python -c "import sys, torch; print('Python', sys.version.split()[0], '| torch', torch.__version__)"
	.venv-floor/bin/python -m pytest -n 2

# the documentation site, offline, into site/ (strict: a broken link or reference is an error)
docs: setup
	$(BIN)/mkdocs build --strict --site-dir site

demo: setup
	$(BIN)/python examples/demo.py

bench: setup  # needs ../shared/data (or TLITE_DATA_DIR); about 15 minutes on 2 cores
	$(BIN)/python benchmarks/bench_tokenize.py
	$(BIN)/python benchmarks/bench_gpt.py all
	$(BIN)/python benchmarks/bench_classifier.py

# the side-by-side speed figures (about 15 minutes): NANOGPT=DIR measures a nanoGPT checkout kept outside
# this repository instead of benchmarks/reference_gpt.py; TRANSLATOR=RUN adds the translator's decoding times;
# BEFORE=DIR compares this checkout with another one (an earlier release) in one alternating run
bench-speed: setup
	$(BIN)/python benchmarks/bench_vs_reference.py train $(if $(NANOGPT),--nanogpt $(NANOGPT))
	$(BIN)/python benchmarks/bench_vs_reference.py sample $(if $(NANOGPT),--nanogpt $(NANOGPT))
	$(BIN)/python benchmarks/bench_vs_reference.py memory
	$(BIN)/python benchmarks/profile_train_step.py --size d128
	$(BIN)/python benchmarks/profile_train_step.py --size d32
	$(if $(TRANSLATOR),$(BIN)/python benchmarks/bench_translate.py $(TRANSLATOR) --skip-unbatched)
	$(if $(BEFORE),$(BIN)/python benchmarks/compare_versions.py --before $(BEFORE))
	$(if $(BEFORE),$(BIN)/python benchmarks/compare_versions.py --before $(BEFORE) --only sample-one-process --rounds 21)

screenshots: setup browser  # trains small runs on ../shared/data (about 20 min), writes outputs/screenshots/*.png
	$(BIN)/python examples/screenshots.py

clean:
	rm -rf $(VENV) .venv-floor outputs .pytest_cache
