# Two commands are all the set-up there is: `make demo` and `make test`.
# Each creates .venv if missing and installs the project (with every extra) into it.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck pytest docs wheel-check system-deps bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/city360 demo

test: $(STAMP) system-deps lint typecheck docs pytest wheel-check

lint: $(STAMP)
	$(BIN)/ruff check city360 tests
	$(BIN)/ruff format --check city360 tests

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

# The documentation site (MkDocs + Material + mkdocstrings), warnings as errors; a few seconds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The wheel on its own (~2 min): build sdist + wheel, install the wheel in a fresh venv outside
# the checkout, run synth -> ingest -> build -> tasks -> eval from there. WHEEL_CHECK=0 skips it.
wheel-check:
	PYTHON=$(PYTHON) ./scripts/wheel-check.sh

# OCR (tesseract), CJK fonts for Japanese signs and Chromium for the browser tests come from
# Debian. Installed here when running as root with apt-get; otherwise the tests that need them
# skip and say what is missing.
system-deps:
	@./scripts/system-deps.sh

bench: $(STAMP)
	$(BIN)/city360 bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site
