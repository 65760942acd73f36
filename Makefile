# Two commands are all the set-up there is: `make demo` and `make test`.
# Each creates .venv if missing and installs the project (with every extra) into it, at the
# versions pinned in constraints.txt (`make lock` refreshes them).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck pytest docs wheel-check system-deps bench clean lock

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[all]'
	touch $(STAMP)

# Re-pin constraints.txt to the newest releases pyproject.toml allows (a throwaway venv, ~2 min);
# run `make test` on the result before committing it.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip
	.lock-venv/bin/python -m pip install --quiet -e '.[all]'
	{ head -n 3 constraints.txt; .lock-venv/bin/python -m pip freeze --exclude-editable; } > constraints.new
	mv constraints.new constraints.txt
	rm -rf .lock-venv

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

# The wheel on its own (~5 min): build sdist + wheel, install the wheel in a fresh venv outside
# the checkout, run synth -> ingest -> build -> tasks -> eval from there, then the README's
# runnable examples (~4 min, most of it building the demo city). WHEEL_CHECK=0 skips it.
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
