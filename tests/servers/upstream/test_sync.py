"""Exposing a chosen subset of a real upstream's tools, and refreshing them."""

import pytest
from asgiref.sync import async_to_sync

from infra.redis import sync_client
from servers.kinds import upstream as kind
from servers.upstream import health
from servers.upstream.adding import (
    add_upstream_prompts,
    add_upstream_resources,
    add_upstream_tools,
    discover,
)
from servers.upstream.sync import refresh_server, server_upstreams
from servers.upstream.target import UpstreamError
from servers.upstream.tasks import refresh_all_upstreams
from tests.waiting import wait_until

from .fixtures import RecordingContext, UpstreamProcess, free_port


def run(row, arguments, ctx=None):
    tool_def = {
        "name": row.name,
        "config": row.config,
        "_server": {"id": row.server_id, "organizationId": row.server.organization_id},
    }
    return async_to_sync(kind.call)(kind.compile(tool_def), arguments, ctx or RecordingContext())


def test_discover_lists_what_the_upstream_offers(server, upstream, loopback_allowed):
    tools = {t["name"]: t for t in discover(server, upstream.url)}
    assert {"add", "count", "confirm", "haiku", "broken", "whoami", "grow"} <= set(tools)
    assert tools["add"]["description"] == "Add two integers."
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]


def test_chosen_tools_are_exposed_renamed_and_redescribed(server, upstream, loopback_allowed):
    rows = add_upstream_tools(
        server,
        upstream.url,
        selected=["add", "count"],
        overrides={
            "add": {
                "name": "plus",
                "description": "Adds numbers.",
                "annotations": {"readOnlyHint": True},
            }
        },
    )
    plus, count = rows
    assert (plus.name, plus.kind, plus.enabled) == ("plus", "upstream", True)
    assert plus.description == "Adds numbers."
    assert plus.annotations == {"readOnlyHint": True}
    assert plus.input_schema["required"] == ["a", "b"]
    assert plus.config["tool"] == "add"
    assert kind.validate_config(plus.config) == []
    assert count.description.startswith("Count to")
    assert list(server.tools.values_list("name", flat=True)) == ["plus", "count"]
    result = run(plus, {"a": 20, "b": 22})
    assert result["structuredContent"] == {"result": 42}


def test_what_cannot_be_exposed_is_refused_with_the_field_named(server, upstream, loopback_allowed):
    with pytest.raises(UpstreamError, match="selected: the upstream has no tool 'nope'"):
        add_upstream_tools(server, upstream.url, selected=["add", "nope"])
    add_upstream_tools(server, upstream.url, selected=["add"])
    with pytest.raises(UpstreamError, match="already has a tool 'add'"):
        add_upstream_tools(server, upstream.url, selected=["add"])
    with pytest.raises(UpstreamError, match="url: required"):
        add_upstream_tools(server, "file:///etc/passwd", selected=["add"])
    assert server.tools.count() == 1


def test_an_unreachable_upstream_cannot_be_added(server, loopback_allowed):
    from servers.upstream.connection import UpstreamUnreachable

    with pytest.raises(UpstreamUnreachable, match="the connection failed"):
        add_upstream_tools(server, f"http://127.0.0.1:{free_port()}/mcp")
    assert not server.tools.exists()


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


def test_exposed_tools_are_served_through_a_snapshot(
    server, upstream, loopback_allowed, monkeypatch
):
    from servers import kinds, methods
    from servers.snapshot import compile_definition, definition_for

    # The kind registry is another module's; the kind is registered there by one line.
    monkeypatch.setitem(kinds.KINDS, "upstream", kind)
    add_upstream_tools(
        server,
        upstream.url,
        selected=["add", "count"],
        overrides={"add": {"name": "plus", "description": "Adds numbers."}},
    )
    snapshot = compile_definition(
        definition_for(server),
        server_id=server.pk,
        organization_id=server.organization_id,
        generation="1",
    )
    listed = async_to_sync(methods.tools_list)(snapshot, {}, RecordingContext())
    plus = next(t for t in listed["tools"] if t["name"] == "plus")
    assert plus["description"] == "Adds numbers."
    assert plus["outputSchema"]["properties"]["result"]["type"] == "integer"
    ctx = RecordingContext()
    result = async_to_sync(methods.tools_call)(
        snapshot, {"name": "plus", "arguments": {"a": 5, "b": 6}}, ctx
    )
    assert result["structuredContent"] == {"result": 11}
    # Arguments are checked against the upstream's schema before anything is sent.
    refused = async_to_sync(methods.tools_call)(
        snapshot, {"name": "plus", "arguments": {"a": "five"}}, ctx
    )
    assert refused["isError"] is True
    counted = async_to_sync(methods.tools_call)(
        snapshot, {"name": "count", "arguments": {"steps": 2}}, ctx
    )
    assert counted["content"][0]["text"] == "counted to 2"
    assert len(ctx.progress_events) == 2


def _served(server):
    from servers.snapshot import compile_definition, definition_for

    return compile_definition(
        definition_for(server),
        server_id=server.pk,
        organization_id=server.organization_id,
        generation="1",
    )


def test_chosen_prompts_are_exposed_renamed_and_served(server, upstream, loopback_allowed):
    from servers import methods

    (row,) = add_upstream_prompts(
        server, upstream.url, selected=["greet"], overrides={"greet": {"name": "hello"}}
    )
    assert (row.name, row.kind, row.description) == ("hello", "upstream", "Greet someone by name.")
    assert row.arguments == [{"name": "who", "required": True}]
    assert row.config == {"url": upstream.url, "transport": "streamable-http", "prompt": "greet"}
    snapshot = _served(server)
    assert [p["name"] for p in snapshot.prompt_list] == ["hello"]
    result = async_to_sync(methods.prompts_get)(
        snapshot, {"name": "hello", "arguments": {"who": "Ada"}}, RecordingContext()
    )
    assert result["messages"][0]["content"]["text"] == "Please greet Ada warmly."


def test_prompts_that_cannot_be_exposed_are_refused_with_the_field_named(
    server, upstream, loopback_allowed
):
    with pytest.raises(UpstreamError, match="selected: the upstream has no prompt 'nope'"):
        add_upstream_prompts(server, upstream.url, selected=["nope"])
    add_upstream_prompts(server, upstream.url)
    with pytest.raises(UpstreamError, match="already has a prompt 'greet'"):
        add_upstream_prompts(server, upstream.url)
    with pytest.raises(UpstreamError, match="overrides: 'other' is not selected"):
        add_upstream_prompts(server, upstream.url, selected=[], overrides={"other": {"name": "x"}})
    assert server.prompts.count() == 1


def test_chosen_resources_are_exposed_under_our_uri_and_served(server, upstream, loopback_allowed):
    from servers import methods

    (row,) = add_upstream_resources(
        server,
        upstream.url,
        selected=["notes://welcome"],
        overrides={"notes://welcome": {"uri": "docs://welcome", "title": "Welcome"}},
    )
    assert (row.uri, row.name, row.title, row.mime_type) == (
        "docs://welcome",
        "welcome",
        "Welcome",
        "text/plain",
    )
    assert row.config["uri"] == "notes://welcome" and row.kind == "upstream"
    snapshot = _served(server)
    result = async_to_sync(methods.resources_read)(
        snapshot, {"uri": "docs://welcome"}, RecordingContext()
    )
    assert result["contents"] == [
        {"uri": "docs://welcome", "mimeType": "text/plain", "text": "Welcome aboard."}
    ]
    with pytest.raises(UpstreamError, match="already has a resource 'docs://welcome'"):
        add_upstream_resources(
            server,
            upstream.url,
            selected=["notes://welcome"],
            overrides={"notes://welcome": {"uri": "docs://welcome"}},
        )
    with pytest.raises(UpstreamError, match="overrides.notes://welcome.uri: 'plain'"):
        add_upstream_resources(
            server, upstream.url, overrides={"notes://welcome": {"uri": "plain"}}
        )
    assert server.resources.count() == 1
