"""Exposing a chosen subset of a real upstream's tools, prompts and resources as rows of a
server, and serving them."""

import pytest
from asgiref.sync import async_to_sync

from servers.kinds import upstream as kind
from servers.upstream.adding import (
    add_upstream_prompts,
    add_upstream_resources,
    add_upstream_tools,
    discover,
)
from servers.upstream.target import UpstreamError

from .fixtures import RecordingContext, free_port
from .fixtures import run_upstream_tool as run
from .fixtures import served_snapshot as _served


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


def test_exposed_tools_are_served_through_a_snapshot(
    server, upstream, loopback_allowed, monkeypatch
):
    from servers import kinds, methods
    from servers.snapshot import compile_definition, definition_for

    # The kind registry is another module's; the kind is registered there by one line.
    monkeypatch.setitem(kinds.KINDS, "upstream", kind.KIND)
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
