"""activity/copy_insert.py: the drain's COPY stores a row exactly as the ORM's bulk_create did."""

import uuid
from datetime import UTC, datetime

from django.db import transaction

from activity import copy_insert
from activity.models import CallLog

FIELDS = [f.attname for f in CallLog._meta.concrete_fields if f.attname not in ("id", "uid")]


def stored(row: dict) -> dict:
    found = CallLog.objects.values(*FIELDS).get(uid=row["uid"])
    return found


def every_field(org, server, **changes) -> dict:
    row = {
        "uid": uuid.uuid4().hex,
        "at": datetime(2026, 11, 28, 14, 30, 5, 123456, tzinfo=UTC),
        "organization_id": org.pk,
        "server_id": server.pk,
        "server_slug": server.slug,
        "surface": "rest",
        "method": "tools/call",
        "tool": "forecast",
        "api_key_id": None,
        "key_name": "ci \\ key\ttab",
        "user_id": None,
        "oauth_client": "client-1",
        "oauth_grant_id": 2**40,
        "client_name": "ünïcode «name»",
        "client_version": "1.2.3",
        "user_agent": "curl/8\nnext line",
        "client_ip": "2001:db8::1",
        "outcome": "tool_error",
        "error": "it broke: \\N is not null",
        "latency_ms": 12.5,
        "arguments": {"city": "[redacted]", "days": [1, 2, {"x": None}], "q": "a\\b"},
        "session_id": "s-1",
        "request_id": "r-1",
    }
    return row | changes


def test_copy_stores_every_field_as_bulk_create_stores_it(call_queue, org, server):
    for changes in ({}, {"arguments": None, "tool": None, "client_ip": None}):
        by_orm = every_field(org, server, **changes)
        by_copy = every_field(org, server, **changes)
        with transaction.atomic():
            CallLog.objects.bulk_create([CallLog(**by_orm)], ignore_conflicts=True)
            copy_insert.insert([by_copy])
        assert stored(by_copy) == stored(by_orm)


def test_a_row_without_optional_fields_gets_the_models_defaults(call_queue, org):
    row = {"uid": uuid.uuid4().hex, "at": datetime.now(UTC), "organization_id": org.pk}
    with transaction.atomic():
        copy_insert.insert([row | {"method": "ping"}])
    call = CallLog.objects.get(uid=row["uid"])
    assert (call.surface, call.outcome, call.latency_ms, call.error, call.arguments) == (
        "mcp",
        "ok",
        0.0,
        "",
        None,
    )


def test_a_uid_already_stored_is_skipped_and_the_rest_stored(call_queue, org, server):
    first, second = every_field(org, server), every_field(org, server)
    with transaction.atomic():
        copy_insert.insert([first])
    with transaction.atomic():
        copy_insert.insert([first | {"method": "changed"}, second])
    assert CallLog.objects.get(uid=first["uid"]).method == "tools/call"
    assert CallLog.objects.filter(uid=second["uid"]).exists()
