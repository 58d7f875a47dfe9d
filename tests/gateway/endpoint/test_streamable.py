import threading
import time

import pytest

from infra import keys as rkeys
from infra.redis import sync_client
from servers.models import Resource, Server, Tool
from tests.gateway.endpoint.mcp_http import RawMcp, messages_of, parse_sse
from tests.waiting import wait_until


def test_it_initializes_and_returns_a_visible_ascii_session_id(client):
    result = client.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"]["name"].startswith("srv-")
    assert "tools" in result["capabilities"]
    assert client.session_id and all(0x21 <= ord(c) <= 0x7E for c in client.session_id)


@pytest.mark.parametrize("requested", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_it_answers_with_the_version_the_client_asked_for(client, requested):
    assert client.initialize(version=requested)["protocolVersion"] == requested


def test_it_answers_an_unknown_version_with_its_latest(client):
    assert client.initialize(version="1999-01-01")["protocolVersion"] == "2025-11-25"


def test_it_answers_a_static_tool_call_with_plain_json(client):
    client.initialize()
    response, messages = client.request(
        "tools/call", {"name": "echo", "arguments": {"message": "hi"}}
    )
    assert response.headers["content-type"].startswith("application/json")
    assert messages[0]["result"]["content"] == [{"type": "text", "text": "You said hi"}]


def test_it_returns_validation_failures_as_tool_errors(client):
    client.initialize()
    result = client.call("tools/call", {"name": "echo", "arguments": {"message": 5}})["result"]
    assert result["isError"] is True
    assert "message" in result["content"][0]["text"]


def test_it_answers_an_unknown_tool_with_invalid_params(client):
    client.initialize()
    reply = client.call("tools/call", {"name": "nope", "arguments": {}})
    assert reply["error"]["code"] == -32602


def test_it_streams_progress_and_logs_before_the_result(client):
    client.initialize()
    response, messages = client.request(
        "tools/call", {"name": "slow_steps", "arguments": {}, "_meta": {"progressToken": "p1"}}
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    methods = [m.get("method") for m in messages]
    assert methods[:-1] == [
        "notifications/message",
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
    ]
    assert [
        m["params"]["progress"] for m in messages if m.get("method", "").endswith("progress")
    ] == [1, 2]
    assert messages[-1]["result"]["content"][0]["text"] == "done"


def test_it_sends_a_priming_event_with_retry_first(client):
    client.initialize()
    response, _ = client.request("tools/call", {"name": "slow_steps", "arguments": {}})
    events = parse_sse(response.text)
    assert events[0]["id"] and events[0]["data"] in ("", None) and events[0]["retry"]
    ids = [e["id"] for e in events if e["id"]]
    assert len(ids) == len(set(ids))


def test_it_honours_the_log_level_the_client_set(client):
    client.initialize()
    assert client.call("logging/setLevel", {"level": "info"})["result"] == {}
    _, messages = client.request("tools/call", {"name": "slow_steps", "arguments": {}})
    levels = [m["params"]["level"] for m in messages if m.get("method") == "notifications/message"]
    assert levels == ["info"]


def test_it_rejects_an_unknown_log_level(client):
    client.initialize()
    assert client.call("logging/setLevel", {"level": "loud"})["error"]["code"] == -32602


def test_it_answers_ping_resources_and_prompts(client):
    client.initialize()
    assert client.call("ping")["result"] == {}
    read = client.call("resources/read", {"uri": "note://items/7"})["result"]
    assert read["contents"][0]["text"] == "Item 7"
    missing = client.call("resources/read", {"uri": "note://nothing"})
    assert (
        missing["error"]["code"] == -32002 and missing["error"]["data"]["uri"] == "note://nothing"
    )
    prompt = client.call("prompts/get", {"name": "greet", "arguments": {"who": "Ann"}})["result"]
    assert prompt["messages"][0]["content"]["text"] == "Hi Ann"
    assert client.call("prompts/get", {"name": "greet", "arguments": {}})["error"]["code"] == -32602


def test_it_answers_an_unknown_method_with_method_not_found_echoing_the_id(client):
    client.initialize()
    response, messages = client.request("does/not/exist")
    assert messages[0]["error"]["code"] == -32601
    assert messages[0]["id"] == client._next_id


def test_it_answers_parse_errors_and_invalid_requests_with_400(client):
    client.initialize()
    bad_json = client.http.post(client.url, content=b"{nope", headers=client.headers())
    assert bad_json.status_code == 400 and bad_json.json()["error"]["code"] == -32700
    not_rpc = client.post({"hello": "world"})
    assert not_rpc.status_code == 400 and not_rpc.json()["error"]["code"] == -32600


def test_it_needs_a_session_for_anything_but_initialize(client):
    response, _ = client.request("tools/list")
    assert response.status_code == 400


def test_it_answers_404_for_an_unknown_session(client):
    client.initialize()
    client.session_id = "0" * 32
    response, _ = client.request("tools/list")
    assert response.status_code == 404


def test_it_ends_a_session_on_delete_and_then_answers_404(client):
    client.initialize()
    deleted = client.http.delete(client.url, headers=client.headers())
    assert deleted.status_code == 200
    response, _ = client.request("tools/list")
    assert response.status_code == 404


def test_it_rejects_an_unsupported_protocol_version_header(client):
    client.initialize()
    response, _ = client.request("tools/list", mcp_protocol_version="2030-01-01")
    assert response.status_code == 400


def test_it_rejects_a_foreign_origin_and_accepts_its_own(client, asgi_server):
    client.initialize()
    foreign, _ = client.request("tools/list", origin="http://evil.example.com")
    assert foreign.status_code == 403
    own, _ = client.request("tools/list", origin=asgi_server.url)
    assert own.status_code == 200
    assert own.headers["access-control-allow-origin"] == asgi_server.url


def test_it_accepts_an_origin_the_server_allows(committed, tenant, asgi_server):
    committed(
        Server.objects.filter(pk=tenant.server.pk).update, allowed_origins=["https://app.example"]
    )
    committed(lambda: Server.objects.get(pk=tenant.server.pk).save())
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    response = client.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        },
        origin="https://app.example",
    )
    assert response.status_code == 200


def test_it_rejects_a_foreign_host_header(client):
    response = client.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, host="evil.example.com")
    assert response.status_code == 400


def test_it_refuses_a_body_over_the_limit(client):
    client.initialize()
    huge = (
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
        + b"a" * (5 * 1024 * 1024)
        + b'"}}'
    )
    response = client.http.post(client.url, content=huge, headers=client.headers())
    assert response.status_code == 413


def test_it_insists_on_json_content(client):
    client.initialize()
    response = client.http.post(
        client.url, content=b"ping", headers=client.headers(content_type="text/plain")
    )
    assert response.status_code == 415
    refused = client.http.post(
        client.url,
        content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers=client.headers(accept="text/html"),
    )
    assert refused.status_code == 406


def test_it_accepts_batches_only_from_2025_03_26_clients(client):
    client.initialize(version="2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    response = client.post(batch)
    assert response.status_code == 200
    assert [m["id"] for m in response.json()] == [1, 2]

    newer = RawMcp(client.url, key=client.key)
    newer.initialize(version="2025-06-18")
    assert newer.post(batch).status_code == 400


def test_it_answers_503_when_paused_and_tells_its_own_key_when_draft(committed, tenant, client):
    client.initialize()

    def set_status(status):
        server = Server.objects.get(pk=tenant.server.pk)
        server.status = status
        server.save()

    committed(set_status, "paused")
    response, _ = client.request("tools/list")
    assert response.status_code == 503
    committed(set_status, "draft")
    response, _ = client.request("tools/list")
    assert response.status_code == 403
    assert "is a draft" in response.json()["error"]["message"]


def test_it_answers_404_for_an_unknown_server(asgi_server, tenant):
    client = RawMcp(asgi_server.mcp_url("no-such-server-here"), key=tenant.raw)
    response, _ = client.request("tools/list")
    assert response.status_code == 404


def test_it_answers_a_cors_preflight(client, asgi_server):
    response = client.http.options(
        client.url,
        headers={
            "origin": asgi_server.url,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, mcp-session-id",
        },
    )
    assert response.status_code == 204
    assert "mcp-session-id" in response.headers["access-control-allow-headers"]
    assert response.headers["access-control-allow-origin"] == asgi_server.url


def test_it_paginates_lists_with_opaque_cursors(client):
    client.initialize()
    result = client.call("tools/list")["result"]
    assert [t["name"] for t in result["tools"]][:2] == ["echo", "slow_steps"]
    assert "nextCursor" not in result
    bad = client.call("tools/list", {"cursor": "not-a-cursor"})
    assert bad["error"]["code"] == -32602


def test_it_replays_a_post_stream_after_last_event_id(client):
    client.initialize()
    response, messages = client.request(
        "tools/call", {"name": "slow_steps", "arguments": {}, "_meta": {"progressToken": 9}}
    )
    events = [e for e in parse_sse(response.text) if e["id"]]
    first_progress = next(
        e
        for e in events
        if isinstance(e["data"], dict) and e["data"].get("method") == "notifications/progress"
    )
    resumed = client.http.get(
        client.url,
        headers={
            **client.headers(accept="text/event-stream"),
            "last-event-id": first_progress["id"],
        },
    )
    replayed = [e["data"] for e in parse_sse(resumed.text) if isinstance(e["data"], dict)]
    assert replayed == messages[messages.index(first_progress["data"]) + 1 :]
    assert replayed[-1]["result"]["content"][0]["text"] == "done"


def test_it_refuses_a_malformed_last_event_id(client):
    client.initialize()
    response = client.http.get(
        client.url, headers={**client.headers(accept="text/event-stream"), "last-event-id": "junk"}
    )
    assert response.status_code == 400


def read_get_stream_until(client, predicate, seconds=8.0):
    """Open the GET stream and return the messages seen until predicate(messages) is true."""
    seen = []
    headers = client.headers(accept="text/event-stream")
    with client.http.stream("GET", client.url, headers=headers, timeout=seconds) as response:
        assert response.status_code == 200
        buffer = ""
        deadline = time.time() + seconds
        for chunk in response.iter_text():
            buffer += chunk
            seen = [e["data"] for e in parse_sse(buffer) if isinstance(e["data"], dict)]
            if predicate(seen) or time.time() > deadline:
                break
    return seen


def stream_listens(client) -> None:
    """Wait until the session's GET stream listens for a wake-up (so it hears the change)."""
    channel = rkeys.session_wake(client.session_id)
    wait_until(
        lambda: sync_client().pubsub_numsub(channel)[0][1] > 0,
        what="the session's GET stream to listen",
    )


def sleeping_calls() -> list[dict]:
    """Calls blocked in this test run's Redis database on their cancellation key: a workflow's
    sleep step waits there (gateway/endpoint/context.py)."""
    redis = sync_client()
    db = str(redis.connection_pool.connection_kwargs.get("db", 0))
    return [
        c
        for c in redis.client_list()
        if c.get("cmd") == "blpop" and "b" in c.get("flags", "") and c.get("db") == db
    ]


def test_it_tells_open_sessions_when_the_tool_list_changes(committed, tenant, client):
    client.initialize()

    def change_later():
        stream_listens(client)
        committed(Tool.objects.filter(server=tenant.server, name="echo").update, description="x")
        committed(lambda: Tool.objects.get(server=tenant.server, name="echo").save())

    threading.Thread(target=change_later).start()
    seen = read_get_stream_until(
        client,
        lambda msgs: any(m.get("method") == "notifications/tools/list_changed" for m in msgs),
    )
    assert any(m.get("method") == "notifications/tools/list_changed" for m in seen)
    tools = client.call("tools/list")["result"]["tools"]
    assert next(t for t in tools if t["name"] == "echo")["description"] == "x"


def test_it_tells_subscribers_when_a_resource_changes(committed, tenant, client):
    client.initialize()
    assert client.call("resources/subscribe", {"uri": "note://readme"})["result"] == {}

    def change_later():
        stream_listens(client)
        resource = committed(Resource.objects.get, server=tenant.server, uri="note://readme")
        resource.text = "Changed."
        committed(resource.save)

    threading.Thread(target=change_later).start()
    seen = read_get_stream_until(
        client, lambda msgs: any(m.get("method") == "notifications/resources/updated" for m in msgs)
    )
    updated = [m for m in seen if m.get("method") == "notifications/resources/updated"]
    assert updated and updated[0]["params"]["uri"] == "note://readme"
    assert (
        client.call("resources/read", {"uri": "note://readme"})["result"]["contents"][0]["text"]
        == "Changed."
    )


def test_it_stops_a_running_workflow_when_the_client_cancels(client):
    client.initialize()
    request_id = 4242
    outcome = {}

    def call():
        started = time.time()
        response = client.post(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "long_wait", "arguments": {}},
            }
        )
        outcome["seconds"] = time.time() - started
        outcome["messages"] = messages_of(response)

    caller = threading.Thread(target=call)
    caller.start()
    wait_until(sleeping_calls, what="the workflow to sleep (blocked on its cancellation key)")
    cancelled = client.post(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": "user"},
        }
    )
    assert cancelled.status_code == 202
    caller.join(10)
    assert outcome["seconds"] < 5
    assert not any("result" in m for m in outcome["messages"])


def test_it_lets_the_connection_go_and_delivers_the_result_on_resumption(client):
    client.initialize()
    response, messages = client.request("tools/call", {"name": "takes_a_break", "arguments": {}})
    events = parse_sse(response.text)
    assert not any("result" in m for m in messages)
    last = events[-1]
    assert last["id"] and last["retry"] == "200"
    resumed = client.http.get(
        client.url,
        headers={**client.headers(accept="text/event-stream"), "last-event-id": last["id"]},
    )
    replayed = [e["data"] for e in parse_sse(resumed.text) if isinstance(e["data"], dict)]
    assert replayed[-1]["result"]["content"][0]["text"] == "finished"


def test_it_keeps_older_clients_on_one_connection(client):
    client.initialize(version="2025-06-18")
    _, messages = client.request("tools/call", {"name": "takes_a_break", "arguments": {}})
    assert messages[-1]["result"]["content"][0]["text"] == "finished"
