"""The conformance fixture server served by the real endpoint (a uvicorn process), checked the
way the suite's 2025-11-25 scenarios check it."""

import asyncio
import base64
import json
import re

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from accounts.models import User
from gateway.agents import longcalls
from servers.definition import import_definition, load_file
from tests.gateway.endpoint.mcp_http import RawMcp


@pytest.fixture
def conformance(asgi_server, committed, unique, examples_dir):
    def make():
        user = User.objects.create_user(f"conf-{unique}@example.com", "long enough password 3")
        data = load_file(examples_dir / "conformance.yaml")
        data["slug"] = f"conf-{unique}"
        import_definition(data, user.personal_organization())
        return data

    data = committed(make)
    client = RawMcp(asgi_server.mcp_url(data["slug"]))
    client.initialize(capabilities={"sampling": {}, "elicitation": {}, "roots": {}})
    return client, data


def result_of(client, method, params=None):
    message = client.call(method, params)
    assert "error" not in message, message
    return message["result"]


def test_tools_list_passes_the_suites_name_and_schema_checks(conformance):
    client, data = conformance
    tools = result_of(client, "tools/list")["tools"]
    # This client declares no tasks, so the platform adds the long-call tools (gateway/agents/)
    # beside the server's task tools; they pass the same checks.
    assert {t["name"] for t in tools} == {t["name"] for t in data["tools"]} | longcalls.NAMES
    for tool in tools:
        assert re.fullmatch(r"[A-Za-z0-9_./-]{1,64}", tool["name"])
        assert tool["description"] and tool["inputSchema"]["type"] == "object"
    listed = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")
    expected = next(t for t in data["tools"] if t["name"] == "json_schema_2020_12_tool")
    assert listed["inputSchema"] == expected["inputSchema"]
    tasks = {t["name"]: t.get("execution", {}).get("taskSupport") for t in tools}
    assert tasks["failing_job"] == "required" and tasks["slow_compute"] == "optional"


def test_the_content_tools_answer_as_the_suite_expects(conformance):
    client, _ = conformance

    def call(name):
        return result_of(client, "tools/call", {"name": name, "arguments": {}})

    assert call("test_simple_text")["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    image = call("test_image_content")["content"][0]
    assert image["mimeType"] == "image/png" and base64.b64decode(image["data"])[:4] == b"\x89PNG"
    audio = call("test_audio_content")["content"][0]
    assert audio["mimeType"] == "audio/wav" and base64.b64decode(audio["data"])[:4] == b"RIFF"
    embedded = call("test_embedded_resource")["content"][0]["resource"]
    assert embedded == {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    mixed = call("test_multiple_content_types")["content"]
    assert [c["type"] for c in mixed] == ["text", "image", "resource"]
    error = call("test_error_handling")
    assert error["isError"] is True
    assert error["content"][0]["text"] == "This tool intentionally returns an error for testing"


def test_the_progress_tool_echoes_the_token_three_times(conformance):
    client, _ = conformance
    _, messages = client.request(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}},
    )
    progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("p-1", 0, 100),
        ("p-1", 50, 100),
        ("p-1", 100, 100),
    ]
    assert "result" in messages[-1]


def test_resources_and_the_template_read_as_the_suite_expects(conformance):
    client, _ = conformance
    listed = result_of(client, "resources/list")["resources"]
    assert {r["uri"] for r in listed} == {
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    }
    text = result_of(client, "resources/read", {"uri": "test://static-text"})["contents"][0]
    assert text["text"] == "This is the content of the static text resource."
    binary = result_of(client, "resources/read", {"uri": "test://static-binary"})["contents"][0]
    assert binary["mimeType"] == "image/png" and base64.b64decode(binary["blob"])[:4] == b"\x89PNG"
    templated = result_of(client, "resources/read", {"uri": "test://template/123/data"})
    content = templated["contents"][0]
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }


def test_prompts_render_as_the_suite_expects(conformance):
    client, _ = conformance
    prompts = result_of(client, "prompts/list")["prompts"]
    assert all(p["description"] for p in prompts)
    simple = result_of(client, "prompts/get", {"name": "test_simple_prompt"})
    assert simple["messages"][0]["content"]["text"] == "This is a simple prompt for testing."
    with_args = result_of(
        client,
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "hello", "arg2": "world"}},
    )
    assert with_args["messages"][0]["content"]["text"] == (
        "Prompt with arguments: arg1='hello', arg2='world'"
    )
    embedded = result_of(
        client,
        "prompts/get",
        {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}},
    )
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://x"
    image = result_of(client, "prompts/get", {"name": "test_prompt_with_image"})
    assert [m["content"]["type"] for m in image["messages"]] == ["image", "text"]
    completion = result_of(
        client,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "he"},
        },
    )
    assert "hello" in completion["completion"]["values"]


class Stateless:
    """The 2026-07-28 wire as the suite speaks it: no session, everything in `_meta`."""

    def __init__(self, url, capabilities=None):
        self.client = RawMcp(url, version="2026-07-28")
        self.capabilities = (
            {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
            if capabilities is None
            else capabilities
        )

    def call_tool(self, name, **extra):
        params = {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            },
            **extra,
        }
        response, messages = self.client.request(
            "tools/call",
            params,
            mcp_protocol_version="2026-07-28",
            mcp_method="tools/call",
            mcp_name=name,
        )
        return response, messages[-1]


@pytest.fixture
def stateless(conformance, asgi_server):
    _, data = conformance
    url = asgi_server.mcp_url(data["slug"])
    response, _ = Stateless(url).call_tool("test_simple_text")
    # The endpoint serves the stateless wire: a refusal here is a failure, never a skip.
    assert response.status_code == 200, (
        f"the endpoint refused a 2026-07-28 call: {response.status_code} {response.text[:200]}"
    )
    return lambda capabilities=None: Stateless(url, capabilities)


def test_mrtr_multi_round_carries_the_first_answer_in_request_state(stateless):
    client = stateless()
    _, first = client.call_tool("test_input_required_result_multi_round")
    round1 = first["result"]
    assert round1["resultType"] == "input_required" and list(round1["inputRequests"]) == ["step1"]
    assert isinstance(round1["requestState"], str)
    _, second = client.call_tool(
        "test_input_required_result_multi_round",
        inputResponses={"step1": {"action": "accept", "content": {"name": "Ada"}}},
        requestState=round1["requestState"],
    )
    round2 = second["result"]
    assert list(round2["inputRequests"]) == ["step2"]
    assert round2["requestState"] != round1["requestState"]
    _, third = client.call_tool(
        "test_input_required_result_multi_round",
        inputResponses={"step2": {"action": "accept", "content": {"color": "teal"}}},
        requestState=round2["requestState"],
    )
    assert third["result"]["content"][0]["text"] == "Multi-round complete for Ada who likes teal"


def test_mrtr_multiple_inputs_are_asked_in_one_round(stateless):
    _, first = stateless().call_tool("test_input_required_result_multiple_inputs")
    assert "result" in first, first
    requests = first["result"]["inputRequests"]
    assert {k: r["method"] for k, r in requests.items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }


def test_mrtr_tampered_request_state_is_rejected(stateless):
    client = stateless()
    _, first = client.call_tool("test_input_required_result_tampered_state")
    state = first["result"]["requestState"]
    tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    _, second = client.call_tool(
        "test_input_required_result_tampered_state",
        inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
        requestState=tampered,
    )
    assert second["error"]["code"] == -32602


def test_mrtr_asks_only_for_what_the_client_can_answer(stateless):
    _, message = stateless({"sampling": {}}).call_tool("test_input_required_result_capabilities")
    requests = message["result"]["inputRequests"]
    assert {r["method"] for r in requests.values()} == {"sampling/createMessage"}


def test_the_missing_capability_tool_is_refused_with_32021_and_http_400(stateless):
    response, message = stateless({}).call_tool("test_missing_capability")
    assert response.status_code == 400
    assert message["error"]["code"] == -32021
    assert message["error"]["data"]["requiredCapabilities"] == {"sampling": {}}


async def test_the_official_sdk_answers_sampling_elicitation_and_sees_the_logs(
    asgi_server, committed, unique, examples_dir
):
    def make():
        user = User.objects.create_user(f"sdk-{unique}@example.com", "long enough password 4")
        data = load_file(examples_dir / "conformance.yaml")
        data["slug"] = f"sdk-{unique}"
        import_definition(data, user.personal_organization())
        return data["slug"]

    slug = await _in_thread(committed, make)
    logs, sampled, asked = [], [], []

    async def on_log(params):
        logs.append(params.data)

    async def on_sample(context, params):
        sampled.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="m"
        )

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(
            action="accept", content={"username": "testuser", "email": "test@example.com"}
        )

    http = create_mcp_http_client()
    client = Client(
        streamable_http_client(asgi_server.mcp_url(slug), http_client=http),
        mode="legacy",
        logging_callback=on_log,
        sampling_callback=on_sample,
        elicitation_callback=on_elicit,
    )
    async with client:
        sampling = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert sampled == ["Capital of France?"]
        assert sampling.content[0].text == "LLM response: Paris"
        elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert asked == ["Who are you?"]
        assert elicited.content[0].text.startswith("User response: action=accept, content=")
        logged = await client.call_tool("test_tool_with_logging", {})
        assert logged.content[0].text == "Tool with logging executed successfully"
        assert logs == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]


async def _in_thread(committed, fn):
    return await asyncio.to_thread(committed, fn)
