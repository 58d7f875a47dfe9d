"""What a task's worker adds to the call-log row of the call that handed its work to the task.

A tools/call that becomes a task (mcptasks) is logged when it is submitted, before any tool
ran: its row cannot name the connected accounts (connections/) the tool will act through. The
worker that runs the task learns them, and amends the row through the same queue as every row:

- the submitting call's row has a uid derived from its task id (`task_call_uid`), so the worker
  names the row without any write on the submission path;
- the worker queues an amendment (`name_connections`) in its own recorder's buffer, pushed to
  the call-log stream with the rows;
- the drain (drain.py) stores its batch's rows first, then applies the batch's amendments. The
  two processes push on their own clocks, so an amendment may reach the stream, and a drain,
  before its row: it then stays pending in the stream's group, as a row a failed drain left,
  and the next drains try it again, for up to PATIENCE_SECONDS after it was made (a row lost
  with a killed web process would keep it waiting for ever).
"""

import hashlib
import logging
import time
import uuid

import orjson

from . import recorder
from .models import CallLog

log = logging.getLogger(__name__)

# Long enough for a row held in a web process's buffer while Redis failed over (the recorder
# keeps it and pushes it when Redis is back); an amendment whose row never came is dropped then.
PATIENCE_SECONDS = 15 * 60
# How an amendment's entry starts in the stream (orjson keeps the key order it is given), so the
# drain sets amendments apart without parsing every row twice.
_PREFIX = b'{"amends":'


def task_call_uid(task_id: str) -> str:
    """The call-log uid of the call that submitted task `task_id`: 32 hex digits, as the
    recorder's own uids (task ids are 192 random bits, so these are as unique)."""
    return hashlib.sha256(f"mcptask:{task_id}".encode()).hexdigest()[:32]


def name_connections(*, task_id: str, connections: tuple[str, ...]) -> None:
    """Queue the naming of `connections` in the row of the call that submitted `task_id`.
    Never runs SQL, never waits on the network (as recorder.record_call)."""
    if not connections:
        return
    recorder.queue(
        {"amends": task_call_uid(task_id), "connections": list(connections), "at": time.time()}
    )


def set_apart(entries: list) -> tuple[list, list[tuple[bytes, dict]]]:
    """(the entries holding rows, the amendments as (entry id, amendment))."""
    rows, amending = [], []
    for entry_id, raw in entries:
        if raw is not None and raw.startswith(_PREFIX):
            amendment = _parse(raw)
            if amendment is not None:
                amending.append((entry_id, amendment))
                continue
        rows.append((entry_id, raw))
    return rows, amending


def _parse(raw: bytes) -> dict | None:
    try:
        amendment = orjson.loads(raw)
        uuid.UUID(amendment["amends"])
        names = [str(name) for name in amendment["connections"]]
        float(amendment["at"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return {**amendment, "connections": names}


def apply(amending: list[tuple[bytes, dict]], now: float | None = None) -> list[bytes]:
    """Name each amendment's connections in its row, after those the row names already; returns
    the entry ids of amendments whose row is not stored yet and may still come."""
    if not amending:
        return []
    now = time.time() if now is None else now
    uids = {uuid.UUID(amendment["amends"]) for _, amendment in amending}
    named = dict(CallLog.objects.filter(uid__in=uids).values_list("uid", "connection"))
    waiting = []
    for entry_id, amendment in amending:
        uid = uuid.UUID(amendment["amends"])
        if uid not in named:
            if now - float(amendment["at"]) < PATIENCE_SECONDS:
                waiting.append(entry_id)
            else:
                log.warning("call log: dropped an amendment whose row never came (%s)", uid)
            continue
        merged = _merged(named[uid], amendment["connections"])
        if merged != named[uid]:
            CallLog.objects.filter(uid=uid).update(connection=merged)
            named[uid] = merged
    return waiting


def _merged(connection: str, names: list[str]) -> str:
    """The row's names (a workflow may act through one before its `task` step), then the new
    ones, as the recorder joins them, cut to the column."""
    known = [name for name in connection.split(", ") if name]
    known += [name for name in names if name not in known]
    return ", ".join(known)[:200]
