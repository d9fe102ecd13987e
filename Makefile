# Set-up and everyday commands. Each target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint bench clean

$(BIN)/discogym: pyproject.toml src/discogym/suites/redstone/_core.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(BIN)/discogym

# The main job: every registered suite with its reference agent, offline (no API key), then the reports.
run: install
	$(BIN)/discogym sweep --out runs/reference
	$(BIN)/discogym redstone reference --out runs/reference/redstone/devices

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

bench: install
	$(BIN)/python benchmarks/harness_overhead.py
	$(BIN)/python benchmarks/llm_overhead.py
	$(BIN)/python benchmarks/petri_sims.py
	$(BIN)/python benchmarks/crafting_env.py
	$(BIN)/python benchmarks/redstone_engine.py
	$(BIN)/python benchmarks/redstone_suite.py
	$(BIN)/python benchmarks/autumn_interpreter.py

clean:
	rm -rf $(VENV) runs .mypy_cache .ruff_cache .pytest_cache
