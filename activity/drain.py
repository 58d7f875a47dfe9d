"""Move call-log rows from Redis into Postgres in bulk (run by Celery beat every few seconds).

Rows leave Redis only after Postgres has committed them (stream.settle after the transaction):
a drain that fails anywhere, Postgres down or the worker killed mid-batch, leaves every row it
read pending, and the next drain stores them. Inserting a row whose uid is already stored does
nothing, so a batch stored twice is stored once. The batch's amendments (a task's worker naming
the connections its run acted through, amendments.py) are applied after its rows.
"""

import logging
import time

from django.db import DataError, IntegrityError, transaction

from accounts.models import ApiKey, Organization, User
from infra.redis import sync_client
from servers.models import Server

from . import amendments, copy_insert, stream
from .models import CallLog

log = logging.getLogger(__name__)

_FIELDS = {f.attname for f in CallLog._meta.concrete_fields} - {"id"}


def drain_call_log(max_rows: int = 5000) -> int:
    """Store up to max_rows queued calls; returns how many rows were written (or were already)."""
    client = sync_client()
    entries = stream.read(client, max_rows)
    if not entries:
        return 0
    row_entries, amending = amendments.set_apart(entries)
    rows = [row for row in (stream.parse_row(raw) for _id, raw in row_entries) if row is not None]
    if len(rows) < len(row_entries):
        log.warning("call log: dropped %d unreadable rows", len(row_entries) - len(rows))
    written = _store(rows)
    # Those whose row has not come yet stay pending: the next drain reads them again.
    waiting = set(amendments.apply(amending))
    stream.settle(client, [entry_id for entry_id, _raw in entries if entry_id not in waiting])
    return written


def drain_for(seconds: float, batch: int = 5000) -> int:
    """Drain batch after batch until nothing waits or `seconds` have passed; returns the rows
    written. Beat runs this every 5 s with a budget under that, so the call log keeps up with
    far more than one batch per run (5,000 rows per 5 s was a ceiling of 1,000 calls/s) while
    one run never holds its worker past its period."""
    deadline = time.monotonic() + seconds
    written = 0
    while True:
        stored = drain_call_log(batch)
        written += stored
        if stored < batch or time.monotonic() >= deadline:
            return written


def drain_everything(batch: int = 5000, max_rounds: int = 100) -> int:
    """Drain until nothing waits; returns the rows written. For embedded mode's shutdown, where
    the queue lives in this process's memory and would die with it."""
    client = sync_client()
    written = 0
    for _ in range(max_rounds):
        if not stream.waiting(client):
            break
        written += drain_call_log(batch)
    return written


def _store(rows: list[dict]) -> int:
    """Raises (leaving the rows pending in Redis) when Postgres cannot be reached."""
    rows = _attach_to_existing(rows)
    try:
        with transaction.atomic():
            if copy_insert.usable():
                copy_insert.insert(rows)
            else:
                CallLog.objects.bulk_create(
                    [_call(row) for row in rows], batch_size=1000, ignore_conflicts=True
                )
    except DataError:
        # Some row Postgres will not take: write the others one by one, drop that one.
        return _insert_one_by_one(rows)
    return len(rows)


def _call(row: dict) -> CallLog:
    return CallLog(**{k: v for k, v in row.items() if k in _FIELDS})


def _insert_one_by_one(rows: list[dict]) -> int:
    written = 0
    for row in rows:
        try:
            with transaction.atomic():
                CallLog.objects.bulk_create([_call(row)], ignore_conflicts=True)
            written += 1
        except (DataError, IntegrityError):
            log.warning(
                "call log: dropped a row Postgres refused (%s %s)", row.get("method"), row.get("at")
            )
    return written


def _attach_to_existing(rows: list[dict]) -> list[dict]:
    """A server, key or organization may be deleted between a call and its drain."""
    orgs = _existing(Organization, {r["organization_id"] for r in rows})
    servers = _existing(Server, {r.get("server_id") for r in rows} - {None})
    keys = _existing(ApiKey, {r.get("api_key_id") for r in rows} - {None})
    users = _existing(User, {r.get("user_id") for r in rows} - {None})
    kept = []
    for row in rows:
        if row["organization_id"] not in orgs:
            continue
        if row.get("server_id") not in servers:
            row["server_id"] = None
        if row.get("api_key_id") not in keys:
            row["api_key_id"] = None
        if row.get("user_id") not in users:
            row["user_id"] = None
        kept.append(row)
    return kept


def _existing(model, ids: set) -> set:
    if not ids:
        return set()
    return set(model.objects.filter(pk__in=ids).values_list("pk", flat=True))
