"""Record every MCP and REST call without touching the database on the hot path.

record_call() appends to an in-process buffer; a daemon thread pushes the buffer to the Redis
list CALL_LOG_KEY every FLUSH_SECONDS or as soon as BATCH_ROWS rows wait; drain_call_log()
(a Celery beat task) moves rows from Redis into Postgres in bulk.

Arguments are redacted by default: the keys stay (they tell which parameters a client used),
every value becomes "[redacted]". A caller passes log_arguments=True only for a server whose
owner opted in; even then values under secret-looking keys stay redacted and large payloads
are cut. Error texts are truncated and scrubbed of anything shaped like a credential.
"""

import atexit
import ipaddress
import logging
import os
import re
import threading
import time
from collections import deque
from datetime import UTC, datetime

import orjson

from servers.redis import sync_client

log = logging.getLogger(__name__)

CALL_LOG_KEY = "mcp:calllog"
FLUSH_SECONDS = 1.0
BATCH_ROWS = 200
# Beyond this (Redis unreachable for a long time) the oldest rows go: the log must never
# grow a worker's memory without bound.
MAX_BUFFERED = 50_000
MAX_ERROR_CHARS = 2000
DRAIN_SECONDS = 5.0
PURGE_SECONDS = 3600.0
MAX_ARGUMENT_BYTES = 16_384
REDACTED = "[redacted]"

SURFACES = ("mcp", "rest", "webtools")
OUTCOMES = ("ok", "tool_error", "error")

_SECRET_KEY_RE = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[-_]?key|auth|cookie|credential|private|signature",
    re.IGNORECASE,
)
_SECRET_TEXT_RE = re.compile(
    r"\b(?P<prefix>gmcp_|gpat_)[A-Za-z0-9_-]+|\b(?P<scheme>Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+",
)

_buffer: deque = deque(maxlen=MAX_BUFFERED)
_wake = threading.Event()
_start_lock = threading.Lock()
_flush_lock = threading.Lock()
_flusher: threading.Thread | None = None
_flusher_pid: int | None = None


def record_call(
    *,
    organization_id: int,
    method: str,
    server_id: int | None = None,
    server_slug: str = "",
    surface: str = "mcp",
    tool: str | None = None,
    api_key_id: int | None = None,
    key_name: str = "",
    user_id: int | None = None,
    oauth_client: str = "",
    oauth_grant_id: int | None = None,
    client_name: str = "",
    client_version: str = "",
    client_info: dict | None = None,
    user_agent: str = "",
    client_ip: str | None = None,
    outcome: str = "ok",
    error: str = "",
    latency_ms: float = 0.0,
    arguments=None,
    log_arguments: bool = False,
    session_id: str = "",
    request_id: str = "",
    at: datetime | float | None = None,
) -> None:
    """Queue one call for the log. Never runs SQL, never waits on the network."""
    if client_info:
        client_name = client_name or str(client_info.get("name") or "")
        client_version = client_version or str(client_info.get("version") or "")
    if isinstance(at, datetime):
        at = at.timestamp()
    _buffer.append(
        {
            "at": at if at is not None else time.time(),
            "organization_id": organization_id,
            "server_id": server_id,
            "server_slug": server_slug or "",
            "surface": surface if surface in SURFACES else "mcp",
            "method": (method or "")[:100],
            "tool": tool[:200] if tool else None,
            "api_key_id": api_key_id,
            "key_name": (key_name or "")[:100],
            "user_id": user_id,
            "oauth_client": (oauth_client or "")[:200],
            "oauth_grant_id": oauth_grant_id,
            "client_name": (client_name or "")[:200],
            "client_version": (client_version or "")[:100],
            "user_agent": (user_agent or "")[:500],
            "client_ip": _ip_or_none(client_ip),
            "outcome": outcome if outcome in OUTCOMES else "error",
            "error": scrub_error(error),
            "latency_ms": float(latency_ms or 0.0),
            "arguments": redact_arguments(arguments, keep=log_arguments),
            "session_id": (session_id or "")[:100],
            "request_id": str(request_id or "")[:100],
        }
    )
    if len(_buffer) >= BATCH_ROWS:
        _wake.set()
    _ensure_flusher()


def _ip_or_none(value) -> str | None:
    # One malformed address would make Postgres refuse the whole batch it lands in.
    try:
        return str(ipaddress.ip_address(value)) if value else None
    except ValueError:
        return None


def redact_arguments(arguments, keep: bool = False):
    if arguments is None:
        return None
    if not isinstance(arguments, dict):
        return REDACTED
    if not keep:
        return dict.fromkeys(arguments, REDACTED)
    kept = _scrub(arguments)
    size = len(orjson.dumps(kept, default=str))
    if size > MAX_ARGUMENT_BYTES:
        return {"[truncated]": f"{size} bytes", **dict.fromkeys(arguments, REDACTED)}
    return kept


def _scrub(value):
    if isinstance(value, dict):
        return {
            k: REDACTED if _SECRET_KEY_RE.search(str(k)) else _scrub(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def scrub_error(error) -> str:
    if not error:
        return ""
    text = _SECRET_TEXT_RE.sub(_hide_secret, str(error))
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 1] + "…"
    return text


def _hide_secret(match: re.Match) -> str:
    if match["prefix"]:
        return match["prefix"] + REDACTED
    return f"{match['scheme']} {REDACTED}"


def flush() -> int:
    """Push everything buffered in this process to Redis now; returns the number of rows."""
    with _flush_lock:
        return _flush_locked()


def _flush_locked() -> int:
    rows = []
    try:
        while True:
            rows.append(_buffer.popleft())
    except IndexError:
        pass
    if not rows:
        return 0
    try:
        client = sync_client()
        pipe = client.pipeline(transaction=False)
        for start in range(0, len(rows), 1000):
            pipe.rpush(
                CALL_LOG_KEY, *(orjson.dumps(r, default=str) for r in rows[start : start + 1000])
            )
        pipe.execute()
    except Exception:
        # Put them back so a Redis hiccup costs a delay, not the rows.
        _buffer.extendleft(reversed(rows))
        raise
    return len(rows)


def pending() -> int:
    """Rows buffered in this process and not yet in Redis."""
    return len(_buffer)


def _ensure_flusher() -> None:
    global _flusher, _flusher_pid
    pid = os.getpid()
    if _flusher is not None and _flusher_pid == pid and _flusher.is_alive():
        return
    with _start_lock:
        if _flusher is not None and _flusher_pid == pid and _flusher.is_alive():
            return
        _flusher_pid = pid
        _flusher = threading.Thread(target=_flush_forever, name="call-log-flusher", daemon=True)
        _flusher.start()


def _flush_forever() -> None:
    last = {"drain": 0.0, "purge": 0.0}
    while True:
        _wake.wait(FLUSH_SECONDS)
        _wake.clear()
        try:
            flush()
        except Exception:
            log.warning("call log: could not push %d rows to Redis", len(_buffer), exc_info=True)
            time.sleep(FLUSH_SECONDS)
        if drains_in_process():
            upkeep(last, time.monotonic())


def drains_in_process() -> bool:
    """Embedded mode (no REDIS_URL) has no Celery beat: this process drains its own rows."""
    from django.conf import settings

    from servers.redis import is_embedded

    configured = getattr(settings, "CALL_LOG_DRAIN_IN_PROCESS", None)
    return is_embedded() if configured is None else bool(configured)


def upkeep(last: dict, now: float) -> None:
    """What Celery beat does otherwise: drain every DRAIN_SECONDS, purge every PURGE_SECONDS."""
    from django.db import close_old_connections

    from .drain import drain_call_log
    from .retention import purge_call_log

    try:
        if now - last["drain"] >= DRAIN_SECONDS:
            last["drain"] = now
            drain_call_log()
        if now - last["purge"] >= PURGE_SECONDS:
            last["purge"] = now
            purge_call_log()
    except Exception:
        log.warning("call log: in-process drain failed", exc_info=True)
    finally:
        close_old_connections()


def _forget_parent_rows() -> None:
    # A forked worker would otherwise push its parent's rows a second time.
    global _flusher
    _buffer.clear()
    _flusher = None


def _flush_at_exit() -> None:
    try:
        flush()
    except Exception:
        log.warning("call log: %d rows lost at exit", len(_buffer))


os.register_at_fork(after_in_child=_forget_parent_rows)
atexit.register(_flush_at_exit)


def parse_row(raw: bytes) -> dict | None:
    """A row from Redis, ready for CallLog(**row); None when it is not one of ours."""
    try:
        row = orjson.loads(raw)
        row["at"] = datetime.fromtimestamp(float(row["at"]), UTC)
        if not row.get("organization_id") or not row.get("method"):
            return None
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return row
