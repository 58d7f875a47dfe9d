"""The upstream kind against a real MCP server (the official SDK) running in a subprocess."""

import pytest
from asgiref.sync import async_to_sync

from mcp_protocol.errors import InputRequired, ToolError
from servers.kinds import upstream as kind
from servers.upstream import health
from tests.servers.upstream import fixtures
from tests.servers.upstream.fixtures import TOKEN, RecordingContext, free_port
from tests.waiting import wait_until_async

upstream = fixtures.upstream
guarded_upstream = fixtures.guarded_upstream
sse_upstream = fixtures.sse_upstream
loopback_allowed = fixtures.loopback_allowed


def compiled(url, tool, **config):
    return kind.compile({"name": f"our_{tool}", "config": {"url": url, "tool": tool, **config}})


async def test_a_call_is_relayed_and_its_result_returned(upstream, loopback_allowed):
    result = await kind.call(compiled(upstream.url, "add"), {"a": 2, "b": 40}, RecordingContext())
    assert result == {
        "content": [{"type": "text", "text": "42"}],
        "structuredContent": {"result": 42},
    }


async def test_progress_and_log_messages_reach_our_client(upstream, loopback_allowed):
    ctx = RecordingContext()
    result = await kind.call(compiled(upstream.url, "count"), {"steps": 3}, ctx)
    assert result["content"][0]["text"] == "counted to 3"
    assert ctx.progress_events == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert ctx.logs == [("info", f"counted {n}", "counter") for n in (1, 2, 3)]


async def test_the_upstreams_elicitation_is_asked_of_our_client(upstream, loopback_allowed):
    ctx = RecordingContext(
        answers={
            "elicitation/create": {"action": "accept", "content": {"confirm": True, "note": "go"}}
        }
    )
    result = await kind.call(compiled(upstream.url, "confirm"), {"question": "Ship it?"}, ctx)
    assert result["content"][0]["text"] == "accepted: confirm=True note=go"
    ((key, method, params),) = ctx.requests
    assert (key, method) == ("upstream-1", "elicitation/create")
    assert params["message"] == "Ship it?"
    assert params["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"


async def test_the_upstreams_sampling_request_is_asked_of_our_client(upstream, loopback_allowed):
    answer = {
        "role": "assistant",
        "content": {"type": "text", "text": "red leaves drifting"},
        "model": "test-model",
    }
    ctx = RecordingContext(answers={"sampling/createMessage": answer})
    result = await kind.call(compiled(upstream.url, "haiku"), {"topic": "autumn"}, ctx)
    assert result["content"][0]["text"] == "model said: red leaves drifting"
    ((_key, method, params),) = ctx.requests
    assert method == "sampling/createMessage"
    assert params["maxTokens"] == 50
    assert params["messages"][0]["content"]["text"] == "A haiku on autumn"


async def test_a_client_without_elicitation_is_not_asked(upstream, loopback_allowed):
    ctx = RecordingContext(capabilities=())
    with pytest.raises(ToolError) as raised:
        await kind.call(compiled(upstream.url, "confirm"), {"question": "Ship it?"}, ctx)
    # The relay declared no elicitation capability, so the upstream's own check refused it.
    assert raised.value.message.endswith("refused the call of 'confirm': Elicitation not supported")
    assert ctx.requests == []


async def test_a_stateless_client_gets_input_required_for_the_upstreams_question(
    upstream, loopback_allowed
):
    needed = InputRequired({"upstream-1": {"method": "elicitation/create", "params": {}}})
    ctx = RecordingContext(answers={"elicitation/create": needed})
    with pytest.raises(InputRequired) as raised:
        await kind.call(compiled(upstream.url, "confirm"), {"question": "Ship it?"}, ctx)
    assert raised.value is needed


async def test_an_upstream_tool_error_stays_a_tool_error(upstream, loopback_allowed):
    result = await kind.call(compiled(upstream.url, "broken"), {}, RecordingContext())
    assert result["isError"] is True
    assert "broken" in result["content"][0]["text"]


async def test_a_call_longer_than_its_timeout_is_a_tool_error(upstream, loopback_allowed):
    tool = compiled(upstream.url, "nap", timeoutSeconds=1)
    with pytest.raises(ToolError) as raised:
        await kind.call(tool, {"seconds": 5}, RecordingContext())
    assert raised.value.message == (
        f"Upstream MCP server 127.0.0.1:{upstream.port} did not finish 'nap' within 1 seconds."
    )


async def test_cancelling_our_call_stops_the_relay_promptly(upstream, loopback_allowed):
    import asyncio
    import time

    ctx = RecordingContext()
    task = asyncio.create_task(kind.call(compiled(upstream.url, "nap"), {"seconds": 30}, ctx))
    await wait_until_async(lambda: ctx.logs, what="the upstream to start its nap")
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 5
    # The upstream is still there for the next call.
    result = await kind.call(compiled(upstream.url, "add"), {"a": 1, "b": 2}, RecordingContext())
    assert result["structuredContent"] == {"result": 3}


async def test_the_sse_transport_relays_the_same_way(sse_upstream, loopback_allowed):
    ctx = RecordingContext()
    tool = compiled(sse_upstream.url, "count", transport="sse")
    result = await kind.call(tool, {"steps": 2}, ctx)
    assert result["content"][0]["text"] == "counted to 2"
    assert [p[0] for p in ctx.progress_events] == [1.0, 2.0]
    assert len(ctx.logs) == 2


async def test_an_unreachable_upstream_is_a_clear_tool_error_and_unhealthy(loopback_allowed):
    port = free_port()  # nothing listens there
    url = f"http://127.0.0.1:{port}/mcp"
    tool = kind.compile(
        {"name": "gone", "config": {"url": url, "tool": "add"}, "_server": {"id": 990001}}
    )
    with pytest.raises(ToolError) as raised:
        await kind.call(tool, {"a": 1, "b": 1}, RecordingContext())
    assert raised.value.message == (
        f"Upstream MCP server 127.0.0.1:{port} is unreachable: the connection failed."
    )
    state = await health.ahealth(990001, url)
    assert state["status"] == "unreachable"
    assert state["lastError"] == "the connection failed"


async def test_a_reachable_upstream_is_recorded_healthy(upstream, loopback_allowed):
    tool = kind.compile(
        {"name": "add", "config": {"url": upstream.url, "tool": "add"}, "_server": {"id": 990002}}
    )
    await kind.call(tool, {"a": 1, "b": 1}, RecordingContext())
    assert (await health.ahealth(990002, upstream.url))["status"] == "ok"


async def test_a_private_address_is_refused_by_the_ssrf_guard(upstream, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ""
    with pytest.raises(ToolError) as raised:
        await kind.call(compiled(upstream.url, "add"), {"a": 1, "b": 1}, RecordingContext())
    assert "is unreachable" in raised.value.message
    assert "not allowed" in raised.value.message


def test_auth_headers_are_rendered_from_the_vault(guarded_upstream, loopback_allowed, org):
    from servers.models import Server
    from vault.models import Secret

    server = Server.objects.create(organization=org, slug="relay", name="relay")
    Secret.store(org, "UPSTREAM_TOKEN", TOKEN)
    tool = kind.compile(
        {
            "name": "whoami",
            "config": {
                "url": guarded_upstream.url,
                "tool": "whoami",
                "headers": {"Authorization": "Bearer {{ secrets.UPSTREAM_TOKEN }}"},
            },
            "_server": {"id": server.pk, "organizationId": org.pk},
        }
    )
    result = async_to_sync(kind.call)(tool, {}, RecordingContext())
    assert result["content"][0]["text"] == f"Bearer {TOKEN}"


def test_wrong_credentials_are_reported_without_the_secret(guarded_upstream, loopback_allowed, org):
    from servers.models import Server
    from vault.models import Secret

    server = Server.objects.create(organization=org, slug="relay", name="relay")
    Secret.store(org, "UPSTREAM_TOKEN", "not-the-token-at-all")
    tool = kind.compile(
        {
            "name": "whoami",
            "config": {
                "url": guarded_upstream.url,
                "tool": "whoami",
                "headers": {"Authorization": "Bearer {{ secrets.UPSTREAM_TOKEN }}"},
            },
            "_server": {"id": server.pk, "organizationId": org.pk},
        }
    )
    with pytest.raises(ToolError) as raised:
        async_to_sync(kind.call)(tool, {}, RecordingContext())
    assert "answered HTTP 401 (check the credentials it is given)" in raised.value.message
    assert "not-the-token-at-all" not in raised.value.message


def test_a_missing_secret_is_named(guarded_upstream, org):
    tool = kind.compile(
        {
            "name": "whoami",
            "config": {
                "url": guarded_upstream.url,
                "tool": "whoami",
                "headers": {"Authorization": "Bearer {{ secrets.NOT_THERE }}"},
            },
            "_server": {"id": 1, "organizationId": org.pk},
        }
    )
    with pytest.raises(ToolError, match="The secret NOT_THERE is not set for this server"):
        async_to_sync(kind.call)(tool, {}, RecordingContext())


def test_config_validation_names_the_field():
    assert kind.validate_config({"url": "https://mcp.example.com/mcp", "tool": "search"}) == []
    assert kind.validate_config(
        {
            "url": "ftp://x",
            "tool": "",
            "transport": "websocket",
            "headers": {"Mcp-Session-Id": "x", "X-Ok": "{{ broken"},
            "timeoutSeconds": 0,
            "colour": "red",
        }
    ) == [
        "config.colour: unknown field",
        "config.url: required, the upstream's http(s) MCP endpoint",
        "config.transport: must be one of streamable-http, sse",
        "config.headers.Mcp-Session-Id: set by the MCP transport itself",
        "config.headers.X-Ok: Template syntax error in '{{ broken': unexpected end of template, expected 'end of print statement'.",
        "config.timeoutSeconds: must be a number of seconds, at most 3600",
        "config.tool: required, the upstream tool's name",
    ]
    assert kind.validate_config({"url": "https://user:pw@mcp.example.com/", "tool": "t"}) == [
        "config.url: credentials in the URL are not allowed; use headers and secrets"
    ]
