# getmcp: `make run` serves the platform locally, `make test` runs the whole suite.
# Installs are keyed on pyproject.toml through stamp files inside .venv, so a second run is quick.

HOST ?= 127.0.0.1
PORT ?= 8000
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
CELERY_APP := getmcp.celery:app
PYTEST_ARGS ?=

# The test suite talks to a real Postgres and Redis; these are the local defaults.
TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL := redis://127.0.0.1:6379/0

.DEFAULT_GOAL := help
.PHONY: help run test lint format conformance bench worker beat migrate demo services chromium install install-dev assets

help:
	@echo "make run          serve getmcp on http://$(HOST):$(PORT) (SQLite + in-process Redis unless DATABASE_URL/REDIS_URL are set)"
	@echo "make test         run the whole test suite against Postgres and Redis (PYTEST_ARGS=... to narrow)"
	@echo "make lint         ruff check and ruff format --check (make format fixes)"
	@echo "make conformance  run the MCP conformance suite against a local server"
	@echo "make bench        compare tools/call throughput with a FastMCP server"
	@echo "make worker       run a Celery worker (needs REDIS_URL)"
	@echo "make beat         run Celery beat (needs REDIS_URL)"
	@echo "make assets       install the dashboard's code editor (Ace, from npm) into static/vendor/"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py demo

# Printed endpoint URLs follow HOST and PORT unless SITE_URL says otherwise.
run demo: export SITE_URL ?= http://$(HOST):$(PORT)

# The code editor of JSON/YAML fields; without npm the fields stay plain textareas.
assets:
	@scripts/assets.sh

run: demo assets
	$(BIN)/uvicorn getmcp.asgi:application --host $(HOST) --port $(PORT)

# Only the test and bench targets default to the local Postgres and Redis; `make run` stays embedded.
test services bench: export DATABASE_URL ?= $(TEST_DATABASE_URL)
test services bench: export REDIS_URL ?= $(TEST_REDIS_URL)

services:
	@scripts/services.sh

# Browser tests drive Debian's chromium; it is installed only when we are root and it is missing.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" -eq 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else \
			echo "chromium: /usr/bin/chromium is missing; browser tests will fail (apt-get install chromium as root)"; \
		fi; \
	fi

test: install-dev services chromium assets
	$(BIN)/pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

conformance: install
	scripts/conformance.sh

bench: install-dev services
	@command -v wrk >/dev/null || { [ "$$(id -u)" -eq 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(PY) bench/run.py

worker: install
	$(BIN)/celery -A $(CELERY_APP) worker --loglevel=$${LOG_LEVEL:-INFO}

beat: install
	@mkdir -p var
	$(BIN)/celery -A $(CELERY_APP) beat --loglevel=$${LOG_LEVEL:-INFO} --schedule=var/celerybeat-schedule
