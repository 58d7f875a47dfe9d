"""The two example servers: they import, export back to exactly the file, and their tools do
what the conformance suite (and the demo's README) says they do."""

import base64
import json
import struct

import pytest

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import InputRequired, McpError, ToolError
from servers import kinds
from servers.definition import export_definition, import_definition, load_file

pytestmark = pytest.mark.django_db


class AnsweringClient(RequestContext):
    """A client context that answers server->client requests from a dict and records the rest."""

    def __init__(self, answers=None, capabilities=None):
        self.protocol_version = "2025-11-25"
        self.client_capabilities = (
            {"elicitation": {}, "sampling": {}, "roots": {}}
            if capabilities is None
            else capabilities
        )
        self.client_info = None
        self.credential = "anon"
        self.answers = answers or {}
        self.logs: list[tuple] = []
        self.progress_events: list[tuple] = []
        self.requests: list[tuple] = []
        self.slept: list[float] = []

    async def log(self, level, data, logger=None):
        self.logs.append((level, data, logger))

    async def progress(self, progress, total=None, message=None):
        self.progress_events.append((progress, total, message))

    async def request(self, key, method, params):
        self.requests.append((key, method, params))
        if key not in self.answers:
            # What the stateless era does with a request the client has not answered yet.
            raise InputRequired({key: {"method": method, "params": params}})
        return self.answers[key]

    async def sleep(self, seconds):
        self.slept.append(seconds)


def tools_of(path):
    return {tool["name"]: tool for tool in load_file(path)["tools"]}


async def call(tool: dict, arguments=None, client=None):
    module = kinds.get_kind(tool["kind"])
    client = client or AnsweringClient()
    return await module.call(module.compile(tool), arguments or {}, client), client


@pytest.mark.parametrize("name", ["demo.yaml", "conformance.yaml"])
def test_an_example_round_trips_through_the_database_unchanged(name, examples_dir, org):
    data = load_file(examples_dir / name)
    server = import_definition(data, org)
    assert export_definition(server) == data


def test_the_conformance_image_and_audio_are_real_png_and_wav(examples_dir):
    tools = tools_of(examples_dir / "conformance.yaml")
    png = base64.b64decode(tools["test_image_content"]["config"]["content"][0]["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    wav = base64.b64decode(tools["test_audio_content"]["config"]["content"][0]["data"])
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
    assert struct.unpack("<I", wav[4:8])[0] == len(wav) - 8


async def test_the_conformance_text_tools_answer_with_the_suite_texts(examples_dir):
    tools = tools_of(examples_dir / "conformance.yaml")
    result, _ = await call(tools["test_simple_text"])
    assert result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    result, _ = await call(tools["test_error_handling"])
    assert result["isError"] is True
    assert result["content"][0]["text"] == "This tool intentionally returns an error for testing"
    result, _ = await call(tools["test_multiple_content_types"])
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert json.loads(result["content"][2]["resource"]["text"]) == {"test": "data", "value": 123}


async def test_the_progress_tool_reports_0_50_100_of_100_with_pauses(examples_dir):
    tool = tools_of(examples_dir / "conformance.yaml")["test_tool_with_progress"]
    _, client = await call(tool)
    assert [(p, t) for p, t, _ in client.progress_events] == [(0, 100), (50, 100), (100, 100)]
    assert client.slept == [0.05, 0.05]


async def test_the_logging_tool_logs_three_info_messages(examples_dir):
    tool = tools_of(examples_dir / "conformance.yaml")["test_tool_with_logging"]
    result, client = await call(tool)
    assert [(level, data) for level, data, _ in client.logs] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]
    assert result["content"][0]["text"] == "Tool with logging executed successfully"


async def test_the_sampling_tool_sends_the_prompt_and_quotes_the_reply(examples_dir):
    tool = tools_of(examples_dir / "conformance.yaml")["test_sampling"]
    reply = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
    client = AnsweringClient({"reply": reply})
    result, _ = await call(tool, {"prompt": "Capital of France?"}, client)
    ((_, method, params),) = client.requests
    assert method == "sampling/createMessage"
    assert params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "maxTokens": 100,
    }
    assert result["content"][0]["text"] == "LLM response: Paris"


async def test_the_elicitation_tools_ask_and_report_the_answer(examples_dir):
    tools = tools_of(examples_dir / "conformance.yaml")
    answer = {"action": "accept", "content": {"username": "testuser", "email": "t@example.com"}}
    client = AnsweringClient({"answer": answer})
    result, _ = await call(tools["test_elicitation"], {"message": "Who are you?"}, client)
    ((_, method, params),) = client.requests
    assert method == "elicitation/create"
    assert params["message"] == "Who are you?"
    assert params["requestedSchema"]["required"] == ["username", "email"]
    text = result["content"][0]["text"]
    assert text.startswith("User response: action=accept, content=")
    assert json.loads(text.split("content=", 1)[1]) == answer["content"]
    declined = AnsweringClient({"answer": {"action": "decline"}})
    result, _ = await call(tools["test_elicitation_sep1034_defaults"], {}, declined)
    defaults = declined.requests[0][2]["requestedSchema"]["properties"]
    assert {k: v["default"] for k, v in defaults.items()} == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    assert result["content"][0]["text"] == "Elicitation completed: action=decline, content={}"


@pytest.mark.parametrize(
    ("tool", "key", "method", "answer", "expected"),
    [
        (
            "test_input_required_result_elicitation",
            "user_name",
            "elicitation/create",
            {"action": "accept", "content": {"name": "Alice"}},
            "Hello, Alice!",
        ),
        (
            "test_input_required_result_sampling",
            "capital_question",
            "sampling/createMessage",
            {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "Sampling result: Paris",
        ),
        (
            "test_input_required_result_list_roots",
            "client_roots",
            "roots/list",
            {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
            "Found 2 root(s): file:///a, file:///b",
        ),
        (
            "test_input_required_result_request_state",
            "confirm",
            "elicitation/create",
            {"action": "accept", "content": {"ok": True}},
            "state-ok: requestState validated (ok=True)",
        ),
    ],
)
async def test_the_mrtr_tools_key_their_requests_as_the_suite_expects(
    examples_dir, tool, key, method, answer, expected
):
    definition = tools_of(examples_dir / "conformance.yaml")[tool]
    with pytest.raises(InputRequired) as raised:
        await call(definition, {}, AnsweringClient())
    assert [(k, r["method"]) for k, r in raised.value.input_requests.items()] == [(key, method)]
    result, _ = await call(definition, {}, AnsweringClient({key: answer}))
    assert result["content"][0]["text"] == expected


async def test_the_multi_round_tool_asks_step1_then_step2(examples_dir):
    tool = tools_of(examples_dir / "conformance.yaml")["test_input_required_result_multi_round"]
    with pytest.raises(InputRequired) as raised:
        await call(tool, {}, AnsweringClient())
    assert list(raised.value.input_requests) == ["step1"]
    first = AnsweringClient({"step1": {"action": "accept", "content": {"name": "Bo"}}})
    with pytest.raises(InputRequired) as raised:
        await call(tool, {}, first)
    assert list(raised.value.input_requests) == ["step2"]
    both = AnsweringClient(
        {
            "step1": {"action": "accept", "content": {"name": "Bo"}},
            "step2": {"action": "accept", "content": {"color": "teal"}},
        }
    )
    result, _ = await call(tool, {}, both)
    assert result["content"][0]["text"] == "Multi-round complete for Bo who likes teal"


async def test_the_multiple_inputs_tools_ask_everything_in_one_round(examples_dir):
    tools = tools_of(examples_dir / "conformance.yaml")
    with pytest.raises(InputRequired) as raised:
        await call(tools["test_input_required_result_multiple_inputs"])
    assert {k: r["method"] for k, r in raised.value.input_requests.items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    assert raised.value.input_requests["greeting"]["params"]["maxTokens"] == 50
    answers = {
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi!"}},
        "client_roots": {"roots": [{"uri": "file:///x"}]},
    }
    result, _ = await call(
        tools["test_input_required_result_multiple_inputs"], {}, AnsweringClient(answers)
    )
    assert result["content"][0]["text"] == "Name: Alice; Greeting: Hi!; Roots: 1"
    with pytest.raises(InputRequired) as raised:
        await call(tools["multi_input"])
    assert len(raised.value.input_requests) == 2


async def test_the_task_fixtures_behave_as_the_tasks_scenarios_expect(examples_dir):
    tools = tools_of(examples_dir / "conformance.yaml")
    result, _ = await call(tools["greet"], {"name": "World"})
    assert result["content"] == [{"type": "text", "text": "Hello, World!"}]
    result, client = await call(tools["slow_compute"], {"seconds": 2, "label": "x"})
    assert client.slept == [2.0]
    assert result["content"][0]["text"] == "Computed x after 2s"
    with pytest.raises(ToolError):
        await call(tools["failing_job"])
    with pytest.raises(McpError) as raised:
        await call(tools["protocol_error_job"])
    assert raised.value.code == -32603
    answer = {"action": "accept", "content": {"confirm": True}}
    result, _ = await call(
        tools["confirm_delete"], {"filename": "a.txt"}, AnsweringClient({"confirmation": answer})
    )
    assert result["content"][0]["text"] == "Deleted a.txt"
    assert {
        tools[n]["execution"]["taskSupport"] for n in ("failing_job", "test_tool_with_task")
    } == {"required"}


async def test_the_demo_tools_compute_echo_and_count_down(examples_dir):
    tools = tools_of(examples_dir / "demo.yaml")
    result, _ = await call(tools["add"], {"a": 2, "b": 3.5})
    assert result["structuredContent"] == {"sum": 5.5}
    result, _ = await call(tools["echo"], {"message": "hi", "shout": True})
    assert result["structuredContent"] == {"echo": "HI"}
    assert result["content"][0]["text"] == "You said: HI"
    result, client = await call(tools["count_down"], {"start": 3})
    assert [p for p, _, _ in client.progress_events] == [0, 1, 2, 3]
    assert [level for level, _, _ in client.logs] == ["info", "notice"]
    assert result["content"][0]["text"] == "Lift-off after counting down from 3!"
    trip = {"action": "accept", "content": {"destination": "Lisbon", "nights": 4}}
    result, _ = await call(tools["plan_trip"], {}, AnsweringClient({"trip": trip}))
    assert result["content"][0]["text"] == "Planned: 4 nights in Lisbon."
