"""The call log's durable queue: a Redis Stream read through a consumer group.

Web processes append rows (recorder.py); the drain (drain.py) reads them through the group,
writes them to Postgres, and acknowledges and deletes them only after the commit. A drain that
fails (Postgres down, the worker killed) leaves its rows pending in the group; the next drain
reads the pending rows again before new ones, so they are retried until stored. Every row
carries a unique `uid`, and Postgres ignores a uid it already holds, so a retried batch never
duplicates a row.

With Redis's append-only file (docker-compose.yml turns it on) the stream and the group's
pending list survive a Redis restart. The stream is capped (CALL_LOG_STREAM_MAX_ROWS, roughly):
during a Postgres outage long enough to reach the cap, the oldest rows give way rather than
Redis's memory.
"""

import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

import orjson
import redis
from django.conf import settings

from infra import keys
from infra.redis import is_cluster, is_sentinel

log = logging.getLogger(__name__)

STREAM_KEY = keys.CALL_LOG_STREAM
GROUP = "drain"
# One consumer name for every drain: a drain re-reads what an earlier, failed drain left
# pending. Two drains running at once may insert the same rows; the uid makes that harmless.
CONSUMER = "drain"
FIELD = b"r"


def max_rows() -> int:
    return settings.CALL_LOG_STREAM_MAX_ROWS


# One entry per row (field FIELD, b"r"), as XADD ... MAXLEN ~ cap * r <row> would add it. A script takes a chunk
# of rows in one command: a pipeline of one XADD per row cost the pushing thread about a tenth
# of the process's CPU at a few thousand calls a second, in redis-py's packing and parsing.
APPEND = """
for i = 2, #ARGV do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'r', ARGV[i])
end
return #ARGV - 1
"""
# Rows per script call: a chunk holds Redis for about a millisecond, not a whole backlog.
CHUNK_ROWS = 1000
_scripts: dict[int, Any] = {}


def append(client: redis.Redis, rows: list[dict]) -> None:
    """Add rows to the stream, a chunk per round trip. Raises when Redis does not take them
    (rows taken before a failure are pushed again with the rest; their uid keeps them once)."""
    cap = max_rows()
    encoded = [orjson.dumps(row, default=str) for row in rows]
    if type(client).__module__.startswith("fakeredis"):
        # Embedded mode: fakeredis runs no Lua without an extra package.
        pipe = client.pipeline(transaction=False)
        for payload in encoded:
            pipe.xadd(STREAM_KEY, {FIELD: payload}, maxlen=cap)
        pipe.execute()
        return
    if is_cluster():
        _append_replicated(client, cap, encoded)
        return
    if is_sentinel():
        _push_and_wait(client, cap, encoded)
        return
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(APPEND)
    for start in range(0, len(encoded), CHUNK_ROWS):
        script(keys=[STREAM_KEY], args=[cap, *encoded[start : start + CHUNK_ROWS]])


# How long a push waits for a replica to hold its rows before it counts as failed (and is sent
# again with the next push).
REPLICA_WAIT_MS = 1000


def _append_replicated(cluster, cap: int, encoded: list[bytes]) -> None:
    """On a Redis Cluster a master acknowledges a write before its replica has it, and a
    failover promotes the replica: rows the master took in that window would be gone. So the
    rows stay in the process's buffer until a replica holds them too (WAIT on the connection
    that wrote them, hence the master's own client rather than the cluster client). A master
    with no replica at all is taken at its word."""
    try:
        _push_and_wait(
            cluster.get_redis_connection(cluster.get_node_from_key(STREAM_KEY)), cap, encoded
        )
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        # The master may be gone or its slot moved: read the slot map again for the next push.
        with contextlib.suppress(redis.RedisError):
            cluster.nodes_manager.initialize()
        raise


def _push_and_wait(direct: redis.Redis, cap: int, encoded: list[bytes]) -> None:
    """Each chunk, then WAIT for a replica on the same connection (a pipeline without MULTI
    keeps one). Also on a Sentinel-watched master, whose failover promotes a replica too."""
    script = direct.register_script(APPEND)
    for start in range(0, len(encoded), CHUNK_ROWS):
        with direct.pipeline(transaction=False) as pipe:
            script(keys=[STREAM_KEY], args=[cap, *encoded[start : start + CHUNK_ROWS]], client=pipe)
            pipe.execute_command("WAIT", 1, REPLICA_WAIT_MS)
            _, replicated = pipe.execute()
        if replicated < 1 and direct.execute_command("ROLE")[2]:
            raise redis.TimeoutError("call-log rows not on a replica yet")


def ensure_group(client: redis.Redis) -> None:
    # From id 0: rows appended before the group existed (a fresh Redis) are drained too.
    try:
        client.xgroup_create(STREAM_KEY, GROUP, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def read(client: redis.Redis, count: int) -> list[tuple[bytes, bytes | None]]:
    """Up to `count` entries: first those a failed drain left pending, then new ones."""
    try:
        entries = _read(client, "0", count)
    except redis.ResponseError as exc:
        if not _group_missing(exc):
            raise
        # A new Redis, or one that lost its data: start the group again.
        ensure_group(client)
        entries = _read(client, "0", count)
    if len(entries) < count:
        entries += _read(client, ">", count - len(entries))
    return entries


def _group_missing(exc: redis.ResponseError) -> bool:
    # Redis says NOGROUP; fakeredis (embedded mode) says the stream key must exist.
    text = str(exc)
    return "NOGROUP" in text or "requires the key to exist" in text


def _read(client, start: str, count: int) -> list[tuple[bytes, bytes | None]]:
    reply = client.xreadgroup(GROUP, CONSUMER, {STREAM_KEY: start}, count=count)
    if not reply:
        return []
    # A pending entry trimmed away by the cap comes back with no fields.
    return [(entry_id, (fields or {}).get(FIELD)) for entry_id, fields in reply[0][1]]


def settle(client: redis.Redis, entry_ids: list[bytes]) -> None:
    """Acknowledge and delete entries whose rows are committed (or were unreadable)."""
    if not entry_ids:
        return
    pipe = client.pipeline(transaction=False)
    pipe.xack(STREAM_KEY, GROUP, *entry_ids)
    pipe.xdel(STREAM_KEY, *entry_ids)
    pipe.execute()


def waiting(client: redis.Redis) -> int:
    """Rows in Redis not yet committed to Postgres (pending ones included)."""
    return int(client.xlen(STREAM_KEY))


def parse_row(raw: bytes | None) -> dict | None:
    """A row from Redis, ready for CallLog(**row); None when it is not one of ours."""
    if raw is None:
        return None
    try:
        row = orjson.loads(raw)
        row["at"] = datetime.fromtimestamp(float(row["at"]), UTC)
        if not row.get("organization_id") or not row.get("method") or not row.get("uid"):
            return None
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return row
