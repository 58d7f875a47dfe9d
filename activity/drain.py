"""Move call-log rows from Redis into Postgres in bulk (run by Celery beat every few seconds)."""

import logging

from django.db import DataError, IntegrityError, transaction

from accounts.models import ApiKey, Organization, User
from servers.models import Server
from servers.redis import sync_client

from .models import CallLog
from .recorder import CALL_LOG_KEY, parse_row

log = logging.getLogger(__name__)

_FIELDS = {f.attname for f in CallLog._meta.concrete_fields} - {"id"}


def drain_call_log(max_rows: int = 5000) -> int:
    """Insert up to max_rows queued calls; returns how many rows were written."""
    client = sync_client()
    raw = client.lpop(CALL_LOG_KEY, max_rows)
    if not raw:
        return 0
    rows = [row for row in map(parse_row, raw) if row is not None]
    if len(rows) < len(raw):
        log.warning("call log: dropped %d unreadable rows", len(raw) - len(rows))
    rows = _attach_to_existing(rows)
    try:
        with transaction.atomic():
            CallLog.objects.bulk_create([_call(row) for row in rows], batch_size=1000)
    except DataError:
        # Some row Postgres will not take: write the others one by one, drop that one.
        return _insert_one_by_one(rows)
    except Exception:
        # Back into the queue so the next run retries them instead of losing them.
        client.rpush(CALL_LOG_KEY, *raw)
        raise
    return len(rows)


def _call(row: dict) -> CallLog:
    return CallLog(**{k: v for k, v in row.items() if k in _FIELDS})


def _insert_one_by_one(rows: list[dict]) -> int:
    written = 0
    for row in rows:
        try:
            with transaction.atomic():
                _call(row).save(force_insert=True)
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
