# getmcp: `make run` serves the platform locally, `make test` runs the whole suite.
# Installs are keyed on pyproject.toml through stamp files inside .venv, so a second run is quick.

HOST ?= 127.0.0.1
PORT ?= 8000
WORKERS ?= 1
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
CELERY_APP := getmcp.celery:app
PYTEST_ARGS ?=
# `make test` runs on this many pytest-xdist workers (0: serially, in this process). Tests that
# share a slow session resource carry an xdist_group mark, kept on one worker by --dist loadgroup.
TEST_WORKERS ?= 2

# The test suite talks to a real Postgres and Redis; these are the local defaults.
TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL := redis://127.0.0.1:6379/0

.DEFAULT_GOAL := help
.PHONY: help run doctor test lint format settings-table lock check-install conformance bench worker worker-platform worker-mcp beat migrate demo services chromium haproxy caddy install install-dev assets multihost

help:
	@echo "make run            serve getmcp on http://$(HOST):$(PORT) (SQLite + in-process Redis unless DATABASE_URL/REDIS_URL are set)"
	@echo "                    with REDIS_URL: the web server, a Celery worker and beat together (Ctrl-C stops all);"
	@echo "                    WORKERS=N web processes (needs REDIS_URL), HOST=0.0.0.0 to listen on every interface"
	@echo "make test           run the whole test suite against Postgres and Redis on TEST_WORKERS=2 parallel"
	@echo "                    pytest-xdist workers (TEST_WORKERS=0 runs it serially; PYTEST_ARGS=... to narrow)"
	@echo "make lint           ruff check, ruff format --check, mypy (pyproject [tool.mypy]) and the import contracts"
	@echo "make format         ruff check --fix and ruff format (what make lint checks)"
	@echo "make settings-table rewrite README.md's settings table from getmcp/environment/ (the declarations)"
	@echo "make lock           regenerate requirements.lock and requirements-dev.lock from pyproject.toml"
	@echo "make check-install  install without extras into a fresh venv, import everything, call an upstream tool"
	@echo "make conformance    run the MCP conformance suite against a local server"
	@echo "make multihost      the multi-host tests on the full topology (3 web hosts, 3+3 Redis Cluster; as root)"
	@echo "make bench          compare tools/call throughput with the official SDKs and FastMCP"
	@echo "make worker         run a Celery worker for platform jobs and MCP tasks alone (needs REDIS_URL)"
	@echo "make worker-platform / worker-mcp   one worker pool per queue, as in production"
	@echo "make beat           run Celery beat alone (needs REDIS_URL)"
	@echo "make migrate        apply database migrations"
	@echo "make demo           create the demo user and servers (kept as they are if present) and a new key"
	@echo "make doctor         run the connector doctor (SLUG=demo) against the site make run serves (same PORT)"
	@echo "make services       make sure the local Postgres and Redis for tests answer"
	@echo "make assets         install the dashboard's code editor (Ace, from npm) into static/vendor/"

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Pinned by the lock files (`make lock` writes them); a dependency missing from them still installs.
$(VENV)/.installed: pyproject.toml requirements.lock | $(PY)
	$(PY) -m pip install --quiet -c requirements.lock -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml requirements-dev.lock | $(PY)
	$(PY) -m pip install --quiet -c requirements-dev.lock -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py demo

# Printed endpoint URLs follow HOST and PORT unless SITE_URL says otherwise; for HOST=0.0.0.0
# they use this machine's address. That host is added to ALLOWED_HOSTS so the URLs answer.
URL_HOST = $(shell $(PYTHON) scripts/run.py --url-host '$(HOST)')
ALLOWED_HOSTS_DEFAULT := localhost,127.0.0.1,[::1]
ALLOWED_HOSTS_GIVEN := $(ALLOWED_HOSTS)
run demo doctor: export SITE_URL ?= http://$(URL_HOST):$(PORT)
run demo doctor: export ALLOWED_HOSTS = $(or $(ALLOWED_HOSTS_GIVEN),$(ALLOWED_HOSTS_DEFAULT)),$(URL_HOST)

# The code editor of JSON/YAML fields; without npm the fields stay plain textareas.
assets:
	@scripts/assets.sh

run: demo assets
	$(PY) scripts/run.py --host $(HOST) --port $(PORT) --workers $(WORKERS)

# The connector doctor against the site `make run` serves (the same HOST, PORT and SITE_URL).
SLUG ?= demo
doctor: install
	$(PY) manage.py server doctor $(SLUG)

# Only the test and bench targets default to the local Postgres and Redis; `make run` stays embedded.
test services bench multihost: export DATABASE_URL ?= $(TEST_DATABASE_URL)
test services bench multihost: export REDIS_URL ?= $(TEST_REDIS_URL)

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

# The scale tests put web processes behind haproxy; installed the same way as chromium.
haproxy:
	@if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then \
		if [ "$$(id -u)" -eq 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy; \
		else \
			echo "haproxy: missing; the balancer tests will be skipped (apt-get install haproxy as root)"; \
		fi; \
	fi

# The TLS proxy test runs deploy/Caddyfile in a real Caddy (README, "TLS in front").
caddy:
	@if ! command -v caddy >/dev/null; then \
		if [ "$$(id -u)" -eq 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq caddy; \
		else \
			echo "caddy: missing; the TLS proxy test will be skipped (apt-get install caddy as root)"; \
		fi; \
	fi

test: install-dev services chromium haproxy caddy assets
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# tests/multihost/ on the full topology (`make test` runs them on the smaller CI one): three web
# hosts, three Redis Cluster masters with a replica each, every conformance scenario.
multihost: install-dev haproxy
	MULTIHOST_FULL=1 $(BIN)/pytest -n 0 tests/multihost $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# README.md's settings table is generated from the variables' declarations (tests check it).
settings-table: install
	$(PY) scripts/settings_table.py

# After any change to [project.dependencies] or the dev extra (takes a few minutes).
lock:
	PYTHON=$(PYTHON) scripts/lock.sh

check-install:
	PYTHON=$(PYTHON) scripts/check_install.sh

conformance: install
	scripts/conformance.sh

bench: install-dev services
	@command -v wrk >/dev/null || { [ "$$(id -u)" -eq 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(PY) bench/run.py

# `worker` consumes both queues (enough for development); in production run one pool per queue
# so tenants' long MCP tasks never delay the platform's own jobs (docs/operations.md).
worker: install
	$(BIN)/celery -A $(CELERY_APP) worker -Q platform,mcp --loglevel=$${LOG_LEVEL:-INFO}

worker-platform: install
	$(BIN)/celery -A $(CELERY_APP) worker -Q platform -n platform@%h --loglevel=$${LOG_LEVEL:-INFO}

worker-mcp: install
	$(BIN)/celery -A $(CELERY_APP) worker -Q mcp -n mcp@%h --loglevel=$${LOG_LEVEL:-INFO}

beat: install
	@mkdir -p var
	$(BIN)/celery -A $(CELERY_APP) beat --loglevel=$${LOG_LEVEL:-INFO} --schedule=var/celerybeat-schedule
