"""Refreshing upstream tools: following the upstream, keeping what the owner changed, and the
scheduled and notified refreshes."""

import pytest

from infra.redis import sync_client
from servers.upstream import health
from servers.upstream.adding import add_upstream_tools
from servers.upstream.sync import refresh_server, server_upstreams
from servers.upstream.tasks import refresh_all_upstreams
from tests.waiting import wait_until

from .fixtures import UpstreamProcess, free_port
from .fixtures import run_upstream_tool as run


@pytest.fixture
def fresh_upstream():
    """An upstream of this test alone: the refresh test changes its tool list."""
    process = UpstreamProcess()
    yield process
    process.stop()


def test_refresh_with_auto_approve_follows_the_upstream_and_keeps_what_the_owner_changed(
    server, fresh_upstream, loopback_allowed
):
    add, count = add_upstream_tools(server, fresh_upstream.url, selected=["add", "count"])
    # Followed at once, as before pinning (tests/servers/upstream/test_pinning.py: held).
    server.upstream_auto_approve = True
    server.save()
    # `add` as the upstream described it at some earlier refresh, untouched by the owner.
    add.description = "Old words."
    add.input_schema = {"type": "object"}
    add.config = {**add.config, "synced": {**add.config["synced"], "description": "Old words."}}
    add.save()
    count.description = "The owner's own words."
    count.save()
    gone = server.tools.create(
        name="vanished",
        description="Was there once.",
        kind="upstream",
        config={"url": fresh_upstream.url, "tool": "vanished", "synced": {}},
        position=9,
    )
    grow = server.tools.create(
        name="grow",
        description="Grow.",
        kind="upstream",
        config={"url": fresh_upstream.url, "tool": "grow", "synced": {}},
        position=10,
    )
    run(grow, {})  # the upstream now also has a tool named `extra`

    (report,) = refresh_server(server)
    assert report.status == "ok"
    assert report.missing == ["vanished"]
    assert report.added == ["extra"] and "add" not in report.available  # new, auto-approved
    assert "add" in report.updated
    add.refresh_from_db()
    count.refresh_from_db()
    gone.refresh_from_db()
    assert add.description == "Add two integers."  # followed the upstream
    assert add.input_schema["required"] == ["a", "b"]
    assert count.description == "The owner's own words."  # kept
    assert gone.enabled is False
    assert gone.config["synced"]["missing"] is True
    # Nothing changed upstream since: a second refresh writes nothing.
    (again,) = refresh_server(server)
    assert again.updated == [] and again.missing == []


def test_refresh_reports_an_unreachable_upstream(server, loopback_allowed):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    server.tools.create(
        name="t", description="t", kind="upstream", config={"url": url, "tool": "t"}
    )
    (report,) = refresh_server(server)
    assert (report.status, report.error) == ("unreachable", "the connection failed")
    assert health.health(server.pk, url)["status"] == "unreachable"


def test_the_scheduled_task_refreshes_every_server_with_upstreams(
    server, upstream, loopback_allowed
):
    add_upstream_tools(server, upstream.url, selected=["add"], headers={"X-Team": "blue"})
    health.record(server.pk, upstream.url, ok=False, error="earlier outage")
    assert refresh_all_upstreams() == 1
    (summary,) = server_upstreams(server)
    assert summary["url"] == upstream.url
    assert summary["headers"] == ["X-Team"]  # names only: values may hold credentials
    assert summary["health"]["status"] == "ok"
    assert summary["health"]["lastError"] == "earlier outage"
    assert summary["tools"] == [
        {"name": "add", "upstreamName": "add", "enabled": True, "missing": False}
    ]


def test_a_list_changed_notification_schedules_a_refresh(
    server, upstream, loopback_allowed, eager_celery
):
    (grow,) = add_upstream_tools(server, upstream.url, selected=["grow"])
    key = f"mcp:upstream:{server.pk}:refresh-scheduled"
    sync_client().delete(key)
    run(grow, {})
    assert wait_until(lambda: sync_client().exists(key), what="a scheduled refresh")
