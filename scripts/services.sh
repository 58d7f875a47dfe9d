#!/usr/bin/env bash
# Makes sure the Postgres and Redis that DATABASE_URL and REDIS_URL name answer, starting this
# machine's own services when they point at loopback and are down. Safe to run again and again.
set -euo pipefail

DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
WAIT_SECONDS=${WAIT_SECONDS:-30}

is_loopback() {
  case "$1" in
    *@127.0.0.1[:/]* | *@localhost[:/]* | *//127.0.0.1[:/]* | *//localhost[:/]* | *//127.0.0.1 | *//localhost) return 0 ;;
    *) return 1 ;;
  esac
}

postgres_up() { pg_isready -q -d "$DATABASE_URL" >/dev/null 2>&1; }
redis_up() { [ "$(redis-cli -u "$REDIS_URL" ping 2>/dev/null)" = "PONG" ]; }

start_postgres() {
  if [ "$(id -u)" -ne 0 ] || ! command -v pg_ctlcluster >/dev/null; then
    echo "services: Postgres at $DATABASE_URL is down and cannot be started here" >&2
    return 1
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "services: starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
}

start_redis() {
  if [ "$(id -u)" -ne 0 ] || ! command -v redis-server >/dev/null; then
    echo "services: Redis at $REDIS_URL is down and cannot be started here" >&2
    return 1
  fi
  echo "services: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
}

wait_for() {
  local name=$1 check=$2
  for _ in $(seq "$((WAIT_SECONDS * 4))"); do
    if "$check"; then
      return 0
    fi
    sleep 0.25
  done
  echo "services: $name did not answer within ${WAIT_SECONDS}s" >&2
  return 1
}

if ! postgres_up; then
  is_loopback "$DATABASE_URL" && start_postgres
  wait_for Postgres postgres_up
fi
if ! redis_up; then
  is_loopback "$REDIS_URL" && start_redis
  wait_for Redis redis_up
fi
echo "services: Postgres and Redis answer"
