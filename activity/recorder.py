"""Record every MCP and REST call without touching the database on the hot path.

record_call() appends to an in-process buffer; a daemon thread pushes the buffer to the Redis
stream of stream.py every CALL_LOG_FLUSH_SECONDS (1 s) or as soon as BATCH_ROWS rows wait;
drain_call_log() (a Celery beat task) moves rows from Redis into Postgres in bulk. Each row gets
a unique id here, so however often a row is pushed or drained it is stored once.

What a process can lose: a SIGTERM (or any orderly exit) pushes the buffer first (the ASGI
lifespan shutdown calls flush_before_exit(), atexit does too). A SIGKILL loses the rows recorded
since the last push: at most CALL_LOG_FLUSH_SECONDS of calls, or, while Redis is unreachable,
everything buffered since it went away (up to MAX_BUFFERED rows). docs/operations.md says more.

Arguments are redacted by default: the keys stay (they tell which parameters a client used),
every value becomes "[redacted]". A caller passes log_arguments=True only for a server whose
owner opted in; even then values under secret-looking keys stay redacted and large payloads
are cut. Error texts are truncated and scrubbed of anything shaped like a credential.
"""

import atexit
import functools
import ipaddress
import itertools
import logging
import os
import re
import threading
import time
from collections import deque
from datetime import datetime

import orjson
from django.conf import settings

from infra.redis import sync_client
from mcp_protocol.limits import depth_exceeds

from . import stream, usage_counts
from .storable import storable_json, storable_text

log = logging.getLogger(__name__)

BATCH_ROWS = 200
# Beyond this (Redis unreachable for a long time) the oldest rows go: the log must never
# grow a worker's memory without bound.
MAX_BUFFERED = 50_000
MAX_ERROR_CHARS = 2000
MAX_ARGUMENT_BYTES = 16_384
MAX_ARGUMENT_DEPTH = 32
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
_pid = os.getpid()  # this process's id, renewed in a forked child (_forget_parent_rows)


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
    connection: str = "",
    uid: str | None = None,
) -> None:
    """Queue one call for the log. Never runs SQL, never waits on the network. `uid` names a
    row another process amends later (amendments.task_call_uid); every other row gets its own."""
    if client_info:
        client_name = client_name or str(client_info.get("name") or "")
        client_version = client_version or str(client_info.get("version") or "")
    if isinstance(at, datetime):
        at = at.timestamp()
    row = _storable(
        {
            "uid": uid or _new_uid(),
            "at": at if at is not None else time.time(),
            "organization_id": organization_id,
            "server_id": server_id,
            "server_slug": (server_slug or "")[:63],
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
            "connection": (connection or "")[:200],
        }
    )
    queue(row)


def queue(entry: dict) -> None:
    """Queue an entry for the stream as it is: a row, or an amendment of one (amendments.py)."""
    _buffer.append(entry)
    if len(_buffer) >= BATCH_ROWS and not _wake.is_set():
        # Once set it stays set until the flusher wakes: setting it again for every row while
        # the flusher pushes took the event's lock and notified nobody, per call.
        _wake.set()
    _ensure_flusher()


def _storable(row: dict) -> dict:
    """Every text of the row as Postgres can store it (escaped, never dropped), cut again to
    its column's length in case an escape made it longer."""
    if _plain(row):
        return row
    for field, limit in _TEXT_LIMITS.items():
        if row[field]:
            row[field] = storable_text(row[field])[:limit]
    row["arguments"] = storable_json(row["arguments"])
    return row


def _plain(row: dict) -> bool:
    """Whether nothing in the row needs escaping: every text, and every key of redacted
    arguments, is ASCII without NUL (record_call has already cut each to its column). That is
    almost every call, and one joined string checked in C costs a fraction of a call per field
    and a rebuilt copy of the arguments (the call log was a sixth of a warm call's CPU)."""
    texts = [row[field] or "" for field in _TEXT_FIELDS]
    arguments = row["arguments"]
    if arguments is not None and arguments is not REDACTED:
        if type(arguments) is not dict or any(v is not REDACTED for v in arguments.values()):
            return False  # values kept (the owner opted in): each is walked
        texts.extend(arguments)
    try:
        joined = "".join(texts)
    except TypeError:  # a key or a field that is not text: the careful path decides
        return False
    return joined.isascii() and "\x00" not in joined


_TEXT_LIMITS = {
    "server_slug": 63,
    "method": 100,
    "tool": 200,
    "key_name": 100,
    "oauth_client": 200,  # stored in Postgres already, so storable; escaped all the same
    "client_name": 200,
    "client_version": 100,
    "user_agent": 500,
    "error": MAX_ERROR_CHARS,
    "session_id": 100,
    "request_id": 100,
}
_TEXT_FIELDS = tuple(_TEXT_LIMITS)


def _new_uid() -> str:
    """A row's unique id: 96 random bits drawn once per 2**32 rows (and again in a forked
    child), then a counter; as unique as uuid4().hex, the 32 hex digits of a UUID, without a
    getrandom() system call and a UUID object per call."""
    global _uid_prefix, _uid_count
    number = next(_uid_count)
    if number >= 1 << 32:
        _uid_prefix, _uid_count = os.urandom(12).hex(), itertools.count(1)
        number = 0
    return f"{_uid_prefix}{number:08x}"


_uid_prefix = os.urandom(12).hex()
_uid_count = itertools.count()


def _ip_or_none(value) -> str | None:
    # One malformed address would make Postgres refuse the whole batch it lands in.
    if not value:
        return None
    if isinstance(value, str):
        return _canonical_ip(value)
    return _canonical_ip.__wrapped__(value)  # an address object or a number: not remembered


@functools.lru_cache(maxsize=1024)
def _canonical_ip(value) -> str | None:
    """An address's canonical text, or None: a client sends many calls from one address, so the
    addresses seen lately are remembered."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def redact_arguments(arguments, keep: bool = False):
    if arguments is None:
        return None
    if not isinstance(arguments, dict):
        return REDACTED
    if not keep:
        return dict.fromkeys(arguments, REDACTED)
    if depth_exceeds(arguments, MAX_ARGUMENT_DEPTH):
        return {"[truncated]": "nested too deeply", **dict.fromkeys(arguments, REDACTED)}
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
    if rows:
        try:
            stream.append(sync_client(), rows)
        except Exception:
            # Put them back so a Redis hiccup costs a delay, not the rows. Rows Redis took before
            # the failure are pushed again; their uid keeps them from being stored twice.
            _buffer.extendleft(reversed(rows))
            raise
    # After the rows: a failure here gives the counts back and loses no row.
    _push_usage_counts()
    return len(rows)


def _push_usage_counts() -> None:
    """The monthly call counts of organizations without a quota (usage_counts.py), on the same
    beat as the rows: no Redis round trip on the calls themselves."""
    counts = usage_counts.take()
    if not counts:
        return
    try:
        usage_counts.push(sync_client(), counts)
    except Exception:
        usage_counts.give_back(counts)
        raise


def flush_before_exit(timeout: float = 5.0) -> int:
    """Push the buffer, retrying for up to `timeout` seconds (Redis may be restarting);
    returns the rows still not pushed (lost when the process ends)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            flush()
            return 0
        except Exception:
            if time.monotonic() >= deadline:
                log.error("call log: %d rows lost at exit (Redis unreachable)", len(_buffer))
                return len(_buffer)
            time.sleep(0.2)


def flush_seconds() -> float:
    return settings.CALL_LOG_FLUSH_SECONDS


def pending() -> int:
    """Rows buffered in this process and not yet in Redis."""
    return len(_buffer)


def _ensure_flusher() -> None:
    global _flusher, _flusher_pid
    pid = _pid  # os.getpid() is a system call per row; the fork hook keeps this one current
    if _flusher is not None and _flusher_pid == pid and _flusher.is_alive():
        return
    with _start_lock:
        if _flusher is not None and _flusher_pid == pid and _flusher.is_alive():
            return
        _flusher_pid = pid
        _flusher = threading.Thread(target=_flush_forever, name="call-log-flusher", daemon=True)
        _flusher.start()


def _flush_forever() -> None:
    while True:
        interval = flush_seconds()
        _wake.wait(interval)
        _wake.clear()
        try:
            flush()
        except Exception:
            log.warning("call log: could not push %d rows to Redis", len(_buffer), exc_info=True)
            time.sleep(interval)


def _forget_parent_rows() -> None:
    # A forked worker would otherwise push its parent's rows a second time, and draw its row
    # ids from its parent's sequence.
    global _flusher, _uid_prefix, _uid_count, _pid
    _buffer.clear()
    usage_counts.forget()
    _flusher = None
    _pid = os.getpid()
    _uid_prefix, _uid_count = os.urandom(12).hex(), itertools.count()


def _flush_at_exit() -> None:
    flush_before_exit(timeout=2.0)


os.register_at_fork(after_in_child=_forget_parent_rows)
atexit.register(_flush_at_exit)
