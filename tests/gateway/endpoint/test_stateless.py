"""MCP 2026-07-28 on /mcp/<slug>: the stateless path beside the session era, over a real uvicorn
process (and, for cancellation, the ASGI app in this process)."""

import asyncio
import base64
import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gateway.endpoint.app import McpApp
from gateway.endpoint.stateless import request_state
from mcp_protocol import sealed_state
from mcp_protocol.jsonrpc import Request
from servers.definition import import_definition
from servers.models import Tool
from tests.gateway.endpoint.conftest import server_definition, workflow_tool
from tests.gateway.endpoint.mcp_http import ACCEPT_BOTH, RawMcp, messages_of, parse_sse
from tests.waiting import becomes, stays

MODERN = "2026-07-28"
NAME_PARAMS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def meta(capabilities=None, **extra) -> dict:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "0.1"},
        **extra,
    }


class Modern:
    """A raw 2026-07-28 client: every request carries its envelope and routing headers."""

    def __init__(self, url: str, key: str | None = None):
        self.url = url
        self.key = key
        self.http = httpx2.Client(timeout=30)
        self.next_id = 1

    def headers(self, method: str, params: dict, extra: dict | None = None) -> dict:
        headers = {
            "content-type": "application/json",
            "accept": ACCEPT_BOTH,
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        if self.key:
            headers["authorization"] = f"Bearer {self.key}"
        name = params.get(NAME_PARAMS.get(method, ""))
        if isinstance(name, str):
            headers["mcp-name"] = name
        for header, value in (extra or {}).items():
            if value is None:
                headers.pop(header.lower(), None)
            else:
                headers[header.lower()] = value
        return headers

    def send(self, method: str, params=None, *, capabilities=None, headers=None, envelope=True):
        params = dict(params or {})
        if envelope:
            params["_meta"] = {**meta(capabilities), **params.get("_meta", {})}
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        response = self.http.post(
            self.url, content=json.dumps(body), headers=self.headers(method, params, headers)
        )
        return response, messages_of(response)

    def result(self, method: str, params=None, **kwargs) -> dict:
        response, messages = self.send(method, params, **kwargs)
        assert response.status_code == 200, response.text
        assert "result" in messages[-1], messages[-1]
        return messages[-1]["result"]

    def error(self, method: str, params=None, **kwargs) -> tuple[int, dict]:
        response, messages = self.send(method, params, **kwargs)
        assert "error" in messages[-1], messages[-1]
        assert messages[-1]["id"] == self.next_id
        return response.status_code, messages[-1]["error"]


@pytest.fixture
def modern(asgi_server, tenant):
    return Modern(asgi_server.mcp_url(tenant.slug), key=tenant.raw)


MRTR_TOOLS = [
    {
        "name": "survey",
        "description": "Asks two questions at once, then one more.",
        "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
        "kind": "workflow",
        "config": {
            "steps": [
                {
                    "all": {
                        "steps": [
                            {
                                "elicit": {
                                    "message": "Your name?",
                                    "requestedSchema": {
                                        "type": "object",
                                        "properties": {"name": {"type": "string"}},
                                    },
                                    "into": "who",
                                }
                            },
                            {
                                "sample": {
                                    "messages": [
                                        {
                                            "role": "user",
                                            "content": {"type": "text", "text": "{{ topic }}?"},
                                        }
                                    ],
                                    "maxTokens": 20,
                                    "into": "idea",
                                }
                            },
                        ]
                    }
                },
                {
                    "elicit": {
                        "message": "Sure, {{ who.content.name }}?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                        },
                        "into": "sure",
                    }
                },
                {
                    "return": {
                        "content": [
                            {
                                "type": "text",
                                "text": "{{ who.content.name }}/{{ idea.content.text }}/"
                                "{{ sure.content.ok }}",
                            }
                        ]
                    }
                },
            ]
        },
    },
    {
        "name": "routed",
        "description": "A tool with an argument clients repeat in a header.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
        "kind": "static",
        "config": {"content": [{"type": "text", "text": "region {{ region | default('none') }}"}]},
    },
    {
        "name": "chatty",
        "description": "Logs at two levels, then waits a little.",
        "inputSchema": {"type": "object", "properties": {}},
        "kind": "workflow",
        "config": {
            "steps": [
                {"log": {"level": "debug", "message": "detail"}},
                {"log": {"level": "warning", "message": "careful"}},
                {"progress": {"progress": 1, "total": 1}},
                {"return": {"content": [{"type": "text", "text": "said it"}]}},
            ]
        },
    },
]


@pytest.fixture
def mrtr(committed, tenant, asgi_server):
    """The tenant's organization with a second server holding the MRTR tools."""

    def make():
        definition = server_definition(f"{tenant.slug}-m")
        definition["tools"] = definition["tools"] + MRTR_TOOLS
        return import_definition(definition, tenant.org)

    server = committed(make)
    modern = Modern(asgi_server.mcp_url(server.slug), key=tenant.raw)
    modern.server = server
    return modern


# -- discovery and results -------------------------------------------------------------------------


def test_it_answers_discover_with_versions_capabilities_and_its_identity(modern, tenant):
    result = modern.result("server/discover")
    assert "2026-07-28" in result["supportedVersions"]
    assert "2025-11-25" in result["supportedVersions"]
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == f"srv-{tenant.slug}"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    # The server needs a key, so nothing it answers may be shared across credentials.
    assert result["cacheScope"] == "private"


def test_it_puts_result_type_and_cache_hints_on_lists_and_reads(modern):
    for method, params in [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "note://readme"}),
    ]:
        result = modern.result(method, params)
        assert result["resultType"] == "complete", method
        assert result["cacheScope"] == "private", method
        assert result["ttlMs"] >= 0, method
    called = modern.result("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert called["resultType"] == "complete"
    assert called["content"] == [{"type": "text", "text": "You said hi"}]
    assert "ttlMs" not in called


def test_it_marks_answers_of_an_open_server_public(committed, tenant, asgi_server):
    def make():
        return import_definition(server_definition(f"{tenant.slug}-o", auth="none"), tenant.org)

    server = committed(make)
    result = Modern(asgi_server.mcp_url(server.slug)).result("tools/list")
    assert result["cacheScope"] == "public"


def test_it_answers_a_missing_resource_with_invalid_params_naming_the_uri(modern):
    status, error = modern.error("resources/read", {"uri": "note://nothing"})
    assert error["code"] == -32602
    assert error["data"] == {"uri": "note://nothing"}


# -- the envelope and the headers ------------------------------------------------------------------


@pytest.mark.parametrize(
    "drop",
    ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"],
)
def test_it_refuses_an_envelope_without_a_required_field(modern, drop):
    params = {"_meta": meta()}
    del params["_meta"][drop]
    status, error = modern.error("server/discover", params, envelope=False)
    assert (status, error["code"]) == (400, -32602)
    assert drop in error["message"]


def test_it_serves_an_envelope_without_client_info(modern):
    params = {"_meta": meta()}
    del params["_meta"]["io.modelcontextprotocol/clientInfo"]
    response, messages = modern.send("tools/list", params, envelope=False)
    assert response.status_code == 200 and "result" in messages[0]


def test_it_refuses_an_unknown_log_level(modern):
    status, error = modern.error(
        "tools/list", {"_meta": {"io.modelcontextprotocol/logLevel": "loud"}}
    )
    assert (status, error["code"]) == (400, -32602)


def test_it_names_a_header_mismatch_before_an_unsupported_version(modern):
    status, error = modern.error(
        "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}}
    )
    assert (status, error["code"]) == (400, -32020)


def test_it_refuses_an_unsupported_version_listing_what_it_supports(modern):
    supported = modern.result("server/discover")["supportedVersions"]
    status, error = modern.error(
        "server/discover",
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}},
        headers={"MCP-Protocol-Version": "v999.0.0"},
    )
    assert (status, error["code"]) == (400, -32022)
    assert error["data"]["requested"] == "v999.0.0"
    assert error["data"]["supported"] and set(error["data"]["supported"]) <= set(supported)


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("tools/list", {}, {"Mcp-Method": "prompts/list"}),
        ("tools/list", {}, {"Mcp-Method": None}),
        ("tools/list", {}, {"Mcp-Method": "TOOLS/LIST"}),
        ("tools/call", {"name": "echo", "arguments": {"message": "x"}}, {"Mcp-Name": "other"}),
        ("tools/call", {"name": "echo", "arguments": {"message": "x"}}, {"Mcp-Name": None}),
        ("resources/read", {"uri": "note://readme"}, {"Mcp-Name": "note://other"}),
        (
            "prompts/get",
            {"name": "greet", "arguments": {"who": "a"}},
            {"Mcp-Name": "=?base64?Z3JlZXQ?="},
        ),
    ],
)
def test_it_refuses_routing_headers_that_disagree_with_the_body(modern, method, params, headers):
    status, error = modern.error(method, params, headers=headers)
    assert (status, error["code"]) == (400, -32020)


def test_it_accepts_routing_headers_in_any_case_with_spaces_or_base64(modern):
    encoded = base64.b64encode(b"greet").decode()
    prompt = modern.result(
        "prompts/get",
        {"name": "greet", "arguments": {"who": "Ada"}},
        headers={"MCP-NAME": f"=?base64?{encoded}?=", "MCP-METHOD": "prompts/get"},
    )
    assert prompt["messages"][0]["content"]["text"] == "Hi Ada"
    # Spaces around a value are not part of it (RFC 9110); httpx2 will not send them, http.client
    # will.
    params = {"name": "echo", "arguments": {"message": "x"}, "_meta": meta()}
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
    headers = modern.headers("tools/call", params, {"mcp-name": "  echo  "})
    url = urlsplit(modern.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    connection.request("POST", url.path, body=body, headers=headers)
    response = connection.getresponse()
    answer = json.loads(response.read())
    connection.close()
    assert response.status == 200, answer
    assert answer["result"]["content"][0]["text"] == "You said x"


def test_it_checks_parameter_headers_against_the_arguments(mrtr):
    call = {"name": "routed", "arguments": {"region": "Hello"}}
    plain = mrtr.result("tools/call", call, headers={"Mcp-Param-Region": "Hello"})
    assert plain["content"][0]["text"] == "region Hello"
    encoded = base64.b64encode(b"Hello").decode()
    assert mrtr.result("tools/call", call, headers={"Mcp-Param-Region": f"=?base64?{encoded}?="})
    # Without the wrapper the value is taken literally.
    literal = {"name": "routed", "arguments": {"region": encoded}}
    assert mrtr.result("tools/call", literal, headers={"Mcp-Param-Region": encoded})
    assert mrtr.result("tools/call", {"name": "routed", "arguments": {}})
    for headers in [
        {},
        {"Mcp-Param-Region": "Other"},
        {"Mcp-Param-Region": "=?base64?SGVsbG8?="},
        {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="},
    ]:
        status, error = mrtr.error("tools/call", call, headers=headers)
        assert (status, error["code"]) == (400, -32020), headers
    status, error = mrtr.error(
        "tools/call", {"name": "routed", "arguments": {}}, headers={"Mcp-Param-Region": "x"}
    )
    assert (status, error["code"]) == (400, -32020)


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "x/y",
    ],
)
def test_it_answers_removed_and_unknown_methods_with_404(modern, method):
    status, error = modern.error(method, {"uri": "note://readme"} if "sub" in method else {})
    assert (status, error["code"]) == (404, -32601)


def test_it_answers_get_and_delete_with_405(modern):
    for verb in ("GET", "DELETE"):
        response = modern.http.request(
            verb,
            modern.url,
            headers={
                "accept": "text/event-stream",
                "mcp-protocol-version": MODERN,
                "authorization": f"Bearer {modern.key}",
            },
        )
        assert response.status_code == 405, verb


def test_it_keeps_serving_the_session_era_on_the_same_url(client, modern):
    client.initialize()
    legacy = client.call("tools/call", {"name": "echo", "arguments": {"message": "old"}})
    assert "resultType" not in legacy["result"]
    assert client.call("ping")["result"] == {}
    assert modern.result("tools/call", {"name": "echo", "arguments": {"message": "new"}})


def test_it_still_asks_for_a_key(modern):
    modern.key = None
    response, _ = modern.send("tools/list")
    assert response.status_code == 401


# -- notifications on the response stream ------------------------------------------------------------


def test_it_sends_no_log_without_a_log_level_and_answers_in_plain_json(mrtr):
    response, messages = mrtr.send("tools/call", {"name": "chatty", "arguments": {}})
    assert response.headers["content-type"].startswith("application/json")
    assert [m.get("method") for m in messages] == [None]
    assert messages[0]["result"]["content"][0]["text"] == "said it"


def test_it_streams_logs_at_or_above_the_level_and_progress_for_a_token(mrtr):
    response, messages = mrtr.send(
        "tools/call",
        {
            "name": "chatty",
            "arguments": {},
            "_meta": {"io.modelcontextprotocol/logLevel": "info", "progressToken": 7},
        },
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert [m.get("method") for m in messages] == [
        "notifications/message",
        "notifications/progress",
        None,
    ]
    assert messages[0]["params"]["data"] == "careful"
    assert messages[1]["params"]["progressToken"] == 7
    assert messages[2]["result"]["resultType"] == "complete"


# -- MRTR ----------------------------------------------------------------------------------------------

EVERYTHING = {"elicitation": {}, "sampling": {}, "roots": {}}


def test_it_asks_for_several_answers_at_once_then_resumes_from_the_sealed_state(mrtr):
    call = {"name": "survey", "arguments": {"topic": "tea"}}
    first = mrtr.result("tools/call", call, capabilities=EVERYTHING)
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"who", "idea"}
    assert first["inputRequests"]["who"]["method"] == "elicitation/create"
    assert first["inputRequests"]["idea"]["params"]["messages"][0]["content"]["text"] == "tea?"
    assert "ttlMs" not in first

    answers = {
        "who": {"action": "accept", "content": {"name": "Ada"}},
        "idea": {"role": "assistant", "content": {"type": "text", "text": "Oolong"}, "model": "m"},
        "ignored": {"action": "decline"},
    }
    second = mrtr.result(
        "tools/call",
        {**call, "inputResponses": answers, "requestState": first["requestState"]},
        capabilities=EVERYTHING,
    )
    assert second["resultType"] == "input_required"
    assert list(second["inputRequests"]) == ["sure"]
    assert second["inputRequests"]["sure"]["params"]["message"] == "Sure, Ada?"
    assert second["requestState"] != first["requestState"]

    # The earlier answers come back from the state alone; only the new one is sent.
    done = mrtr.result(
        "tools/call",
        {
            **call,
            "inputResponses": {"sure": {"action": "accept", "content": {"ok": True}}},
            "requestState": second["requestState"],
        },
        capabilities=EVERYTHING,
    )
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "Ada/Oolong/True"


def test_it_asks_again_for_an_answer_that_is_missing(mrtr):
    result = mrtr.result(
        "tools/call",
        {"name": "ask_name", "arguments": {}, "inputResponses": {"wrong": {"action": "decline"}}},
        capabilities=EVERYTHING,
    )
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["answer"]


@pytest.mark.parametrize("responses", [None, [], {"answer": 12345}])
def test_it_refuses_malformed_input_responses(mrtr, responses):
    status, error = mrtr.error(
        "tools/call",
        {"name": "ask_name", "arguments": {}, "inputResponses": responses},
        capabilities=EVERYTHING,
    )
    assert error["code"] == -32602


def test_it_refuses_a_tampered_or_foreign_request_state(mrtr, modern):
    first = mrtr.result(
        "tools/call", {"name": "ask_name", "arguments": {}}, capabilities=EVERYTHING
    )
    state = first["requestState"]
    answer = {"answer": {"action": "accept", "content": {"name": "Eve"}}}
    flipped = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    for bad in (state + "-TAMPERED", flipped, 5):
        _, error = mrtr.error(
            "tools/call",
            {"name": "ask_name", "arguments": {}, "inputResponses": answer, "requestState": bad},
            capabilities=EVERYTHING,
        )
        assert error["code"] == -32602, bad
    # The same tool on another server of the same organization: bound to the first server.
    _, error = modern.error(
        "tools/call",
        {"name": "ask_name", "arguments": {}, "inputResponses": answer, "requestState": state},
        capabilities=EVERYTHING,
    )
    assert error["code"] == -32602
    # The same tool with other arguments.
    _, error = mrtr.error(
        "tools/call",
        {"name": "ask_model", "arguments": {"question": "?"}, "requestState": state},
        capabilities=EVERYTHING,
    )
    assert error["code"] == -32602


def test_it_refuses_an_expired_request_state(mrtr, tenant, clock):
    request = Request(1, "tools/call", {"name": "ask_name", "arguments": {}})
    # Sealed two seconds ago with a one-second life: expired when the server opens it.
    clock.install(sealed_state)
    clock.advance(-2)
    state = sealed_state.seal(
        {"answers": {}, "request": request_state._request_digest(request)},
        secret=request_state._state_secret(),
        bind={
            "server": mrtr.server.id,
            "tool": "tools/call ask_name",
            "credential": f"key:{tenant.key.id}",
        },
        ttl_seconds=1,
    )
    _, error = mrtr.error(
        "tools/call",
        {"name": "ask_name", "arguments": {}, "requestState": state},
        capabilities=EVERYTHING,
    )
    assert error["code"] == -32602
    assert error["data"] == {"reason": "expired"}


def test_it_refuses_a_question_the_client_cannot_answer_with_400(mrtr):
    status, error = mrtr.error(
        "tools/call",
        {"name": "ask_model", "arguments": {"question": "?"}},
        capabilities={"elicitation": {}},
    )
    assert (status, error["code"]) == (400, -32021)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_it_never_answers_lists_with_input_required(mrtr):
    for method in ("tools/list", "prompts/list", "resources/list"):
        assert mrtr.result(method, capabilities={})["resultType"] == "complete"


# -- cancellation --------------------------------------------------------------------------------------


async def test_a_closed_response_stream_cancels_the_call(committed, tenant, django_db_blocker):
    """In this process, so the test sees what the call does after the client has gone."""

    def make():
        definition = server_definition(f"{tenant.slug}-c", auth="none")
        definition["tools"].append(
            workflow_tool(
                "ticker",
                "Reports progress, waits, reports again.",
                [
                    {"progress": {"progress": 1}},
                    {"sleep": {"ms": 600}},
                    {"progress": {"progress": 2}},
                    {"return": {"content": [{"type": "text", "text": "done"}]}},
                ],
            )
        )
        return import_definition(definition, tenant.org)

    server = await asyncio.to_thread(committed, make)

    async def run(close_after_first_event: bool) -> list[bytes]:
        params = {"name": "ticker", "arguments": {}, "_meta": {**meta(), "progressToken": "t"}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        headers = {
            "host": "localhost",
            "content-type": "application/json",
            "accept": ACCEPT_BOTH,
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "ticker",
        }
        scope = {
            "type": "http",
            "method": "POST",
            "path": f"/mcp/{server.slug}",
            "query_string": b"",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
        chunks: list[bytes] = []
        first_event = asyncio.Event()
        delivered = False

        async def receive():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body.encode(), "more_body": False}
            if close_after_first_event:
                await first_event.wait()
                return {"type": "http.disconnect"}
            await asyncio.Event().wait()

        async def send(message):
            if message["type"] == "http.response.body" and message.get("body"):
                chunks.append(message["body"])
                first_event.set()

        await asyncio.wait_for(McpApp(None)(scope, receive, send), 10)
        if close_after_first_event:
            # Deliberate: a call left running after the app returned would send its second
            # progress within the ticker's 600 ms sleep; watched for longer than that.
            await asyncio.sleep(1)
        return chunks

    with django_db_blocker.unblock():
        finished = b"".join(await run(close_after_first_event=False))
        cancelled = b"".join(await run(close_after_first_event=True))
    assert b'"progress":2' in finished and b'"done"' in finished
    assert b'"progress":1' in cancelled
    assert b'"progress":2' not in cancelled and b'"done"' not in cancelled


# -- subscriptions/listen ---------------------------------------------------------------------------


class Listener:
    """Reads a subscriptions/listen stream in a thread, collecting its events."""

    def __init__(self, modern: Modern, notifications: dict):
        self.events: list[dict] = []
        self.status = None
        self.ready = threading.Event()
        self.stop = threading.Event()
        params = {"notifications": notifications, "_meta": meta()}
        modern.next_id += 1
        self.id = modern.next_id
        self.body = json.dumps(
            {"jsonrpc": "2.0", "id": self.id, "method": "subscriptions/listen", "params": params}
        )
        self.headers = modern.headers("subscriptions/listen", params)
        self.url = modern.url
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10), "the listen stream did not open"

    def run(self):
        with (
            httpx2.Client(timeout=30) as http,
            http.stream("POST", self.url, content=self.body, headers=self.headers) as response,
        ):
            self.status = response.status_code
            buffer = ""
            for text in response.iter_text():
                buffer += text
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    for event in parse_sse(block + "\n\n"):
                        if isinstance(event["data"], dict):
                            self.events.append(event["data"])
                            self.ready.set()
                if self.stop.is_set():
                    return

    def methods(self) -> list[str]:
        return [event["method"] for event in self.events]

    def close(self):
        self.stop.set()
        self.thread.join(5)


def wait_for(predicate, seconds=5.0):
    return becomes(predicate, timeout=seconds)


def test_a_listener_gets_the_acknowledgement_first_then_only_what_it_asked_for(
    committed, tenant, modern
):
    tools_only = Listener(modern, {"toolsListChanged": True, "promptsListChanged": False})
    readme = Listener(modern, {"resourceSubscriptions": ["note://readme"]})
    try:
        ack = tools_only.events[0]
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == tools_only.id
        assert readme.events[0]["params"]["notifications"] == {
            "resourceSubscriptions": ["note://readme"]
        }

        def change():
            from servers.models import Prompt, Resource

            prompt = Prompt.objects.get(server=tenant.server, name="greet")
            prompt.description = "Greets someone warmly."
            prompt.save()
            resource = Resource.objects.get(server=tenant.server, uri="note://readme")
            resource.text = "Read me second."
            resource.save()
            tool = Tool.objects.get(server=tenant.server, name="echo")
            tool.description = "Echo it back."
            tool.save()

        committed(change)
        assert wait_for(lambda: "notifications/tools/list_changed" in tools_only.methods())
        assert wait_for(lambda: "notifications/resources/updated" in readme.methods())
        # Nothing else may follow (the prompt's change is for neither): watched for a while.
        stays(
            lambda: (
                tools_only.methods()
                == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]
                and readme.methods()
                == ["notifications/subscriptions/acknowledged", "notifications/resources/updated"]
            ),
            0.3,
            what="only the asked-for notifications",
        )
        assert readme.events[1]["params"]["uri"] == "note://readme"
        for listener in (tools_only, readme):
            for event in listener.events:
                assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == (
                    listener.id
                )
    finally:
        tools_only.close()
        readme.close()


def test_a_listener_gets_keep_alives_while_nothing_happens(modern):
    response, _ = None, None
    with httpx2.Client(timeout=10) as http:
        params = {"notifications": {"toolsListChanged": True}, "_meta": meta()}
        body = {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": params}
        headers = modern.headers("subscriptions/listen", params)
        with http.stream("POST", modern.url, content=json.dumps(body), headers=headers) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            seen = ""
            started = time.time()
            for text in response.iter_text():
                seen += text
                if ": keep-alive" in seen or time.time() - started > 5:
                    break
    assert ": keep-alive" in seen


def test_it_refuses_a_malformed_listen_filter(modern):
    status, error = modern.error("subscriptions/listen", {"notifications": {"toolsListChanged": 1}})
    assert (status, error["code"]) == (400, -32602)


# -- the official SDK ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
async def test_the_official_sdk_works_in_modern_mode(asgi_server, committed, tenant, mode):
    def make():
        definition = server_definition(f"{tenant.slug}-s{mode[:2]}")
        definition["tools"] = definition["tools"] + MRTR_TOOLS
        return import_definition(definition, tenant.org)

    server = await asyncio.to_thread(committed, make)
    asked, logs = [], []

    async def on_elicit(context, params):
        asked.append(params.message)
        if "name" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"name": "Ada"})
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_sample(context, params):
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Sencha"), model="m"
        )

    async def on_log(params):
        logs.append(params.data)

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant.raw}"})
    client = Client(
        streamable_http_client(asgi_server.mcp_url(server.slug), http_client=http),
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        logging_callback=on_log,
        log_level="warning",
    )
    async with client:
        tools = await client.list_tools()
        assert {"echo", "survey", "routed"} <= {tool.name for tool in tools.tools}
        surveyed = await client.call_tool("survey", {"topic": "tea"})
        assert surveyed.content[0].text == "Ada/Sencha/True"
        assert asked == ["Your name?", "Sure, Ada?"]
        chatty = await client.call_tool("chatty", {})
        assert chatty.content[0].text == "said it"
        assert logs == ["careful"]
        read = await client.read_resource("note://readme")
        assert read.contents[0].text == "Read me first."
        prompt = await client.get_prompt("greet", {"who": "Bo"})
        assert prompt.messages[0].content.text == "Hi Bo"


def test_a_stateless_answer_never_opens_a_session(modern):
    response, _ = modern.send("tools/list")
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers


def test_stateless_calls_land_in_the_call_log_with_the_envelope_client(committed, modern, tenant):
    from activity.drain import drain_call_log
    from activity.models import CallLog

    modern.result("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    modern.error("tools/call", {"name": "missing", "arguments": {}})

    def rows():
        drain_call_log()
        return list(
            CallLog.objects.filter(server_id=tenant.server.pk, method="tools/call").order_by("at")
        )

    assert wait_for(lambda: len(committed(rows)) >= 2, 10)
    logged = committed(rows)
    assert [(row.tool, row.outcome) for row in logged] == [("echo", "ok"), ("missing", "error")]
    assert logged[0].client_name == "stateless-test"


def test_initialize_selects_the_session_era_even_with_a_modern_header(asgi_server, tenant):
    raw = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    response = raw.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
        },
        mcp_protocol_version=MODERN,
    )
    assert response.status_code == 200
    assert response.headers["mcp-session-id"]
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"


def test_a_modern_post_that_is_not_one_request_is_refused(modern):
    headers = modern.headers("tools/list", {})
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}]
    response = modern.http.post(modern.url, content=json.dumps(batch), headers=headers)
    assert response.status_code == 400
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = modern.http.post(modern.url, content=json.dumps(note), headers=headers)
    assert response.status_code == 202


def test_a_listen_stream_ends_when_its_key_is_revoked(committed, modern, tenant):
    listener = Listener(modern, {"toolsListChanged": True})
    try:
        committed(tenant.key.revoke)
        assert wait_for(lambda: len(listener.events) > 1, 10)
        final = listener.events[-1]
        assert final["id"] == listener.id
        assert final["error"]["message"] == "API key revoked or expired"
        assert wait_for(lambda: not listener.thread.is_alive(), 5)
    finally:
        listener.close()


def test_a_listen_stream_ends_when_its_server_is_paused(committed, modern, tenant):
    listener = Listener(modern, {"toolsListChanged": True})
    try:

        def pause():
            tenant.server.status = "paused"
            tenant.server.save()

        committed(pause)
        assert wait_for(lambda: any("error" in event for event in listener.events), 10)
        assert listener.events[-1]["error"]["message"] == "This MCP server is no longer available"
    finally:
        listener.close()
