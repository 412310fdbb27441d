# Two commands: `make serve` runs the knowledge base, `make test` runs the tests
# (`make test-fast`: all but the browser, PostgreSQL and slow tests, installing neither Chromium nor PostgreSQL).
# Each installs what it needs into .venv first.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Where `make serve` listens: `make serve PORT=8080`, `make serve HOST=0.0.0.0` (every interface).
HOST ?= 127.0.0.1
PORT ?= 8000
# PyTorch's CPU build (192 MB), by name: from the package index when it holds it, else from PyTorch's CPU index;
# plain `torch==2.13.0` from PyPI would be the CUDA build, several GB.
TORCH := torch==2.13.0+cpu
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

.PHONY: serve test test-fast docs bench install install-test install-browser install-postgres clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .

# The Python packages the tests import. PyTorch first, pinned: that CPU build is the one the
# sentence-transformers extra needs.
install-test: $(BIN)/python
	$(BIN)/pip install --quiet $(TORCH) || $(BIN)/pip install --quiet $(TORCH) --index-url $(TORCH_CPU_INDEX)
	$(BIN)/pip install --quiet -e '.[st,test]'

# What only the browser tests need (as root, installed with apt; otherwise the command is printed).
install-browser:
	@{ test -x /usr/bin/chromium && test -d /usr/share/fonts/opentype/noto; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; \
	  else echo "browser tests need Chromium and CJK fonts: sudo apt-get install chromium fonts-noto-cjk"; fi; }

# What only the PostgreSQL tests need.
install-postgres:
	@{ command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; \
	  else echo "the PostgreSQL tests need PostgreSQL's server: sudo apt-get install postgresql"; fi; }

serve: install
	$(BIN)/kb ingest
	$(BIN)/kb search "how do I resume training"
	@echo "Coding agents: add this FAQ to Claude Code with the line below (Cursor, Codex: $(BIN)/kb mcp --print-config cursor|codex)"
	@$(BIN)/kb mcp --print-config claude-add
	$(BIN)/kb serve --host $(HOST) --port $(PORT)

test: install-test install-browser install-postgres
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python tools/gendocs.py --check
	$(BIN)/python -m pytest --durations=15

# The tests a change most likely breaks, while working: no Chromium, no PostgreSQL, nothing marked slow
# (so neither is installed for it).
test-fast: install-test
	$(BIN)/python -m pytest -m "not browser and not postgres and not slow" -q

# The docs' sections written from the code (the module map, the kb command, settings, metrics, channels).
docs: install
	$(BIN)/python tools/gendocs.py

# Every benchmark, one Markdown table (about half an hour on 2 cores); `make bench BENCH_ARGS=--quick` for a smoke run.
bench: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
