"""Code mode without a server process: its setting, where it is listed, what its description
teaches, and the programs it refuses before any sandbox runs."""

import pytest

from gateway.agents import codemode, routing
from gateway.agents.discovery import FULL_LIST_META
from mcp_protocol.context import NullContext
from mcp_protocol.errors import ToolError
from servers.discovery.config import read, validate_server
from servers.snapshot import compile_definition

ECHO = {
    "name": "echo",
    "description": "Echo a message back.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
    "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
}


def snapshot_with(agents: dict):
    return compile_definition(
        {"slug": "cm", "name": "cm", "tools": [ECHO], "agents": agents},
        server_id=1,
        organization_id=1,
        generation="g",
    )


def names(snapshot, params=None) -> list[str]:
    return [tool["name"] for tool in routing.list_tools(snapshot, params or {}, NullContext())]


def test_code_mode_is_off_unless_the_server_turns_it_on():
    assert read(None).code_mode is False
    assert read({"codeMode": {"enabled": True}}).code_mode is True
    on = {"discovery": {"mode": "on"}}
    assert codemode.RUN not in names(snapshot_with(on))
    assert codemode.RUN in names(snapshot_with({**on, "codeMode": {"enabled": True}}))


def test_code_mode_is_listed_only_while_discovery_lists_its_meta_tools():
    enabled = {"codeMode": {"enabled": True}}
    assert names(snapshot_with({"discovery": {"mode": "off"}, **enabled})) == ["echo"]
    # auto: one tool is under the threshold, so every tool is listed and no meta-tool.
    assert names(snapshot_with(enabled)) == ["echo"]
    on = snapshot_with({"discovery": {"mode": "on"}, **enabled})
    assert names(on, {"_meta": {FULL_LIST_META: True}}) == ["echo"]
    assert routing.provided(on, codemode.RUN)
    assert not routing.provided(snapshot_with({"discovery": {"mode": "off"}, **enabled}), "x")


def test_a_server_tool_of_the_same_name_wins_over_the_meta_tool():
    own = {**ECHO, "name": codemode.RUN}
    snapshot = compile_definition(
        {
            "slug": "cm",
            "name": "cm",
            "tools": [own],
            "agents": {"discovery": {"mode": "on"}, "codeMode": {"enabled": True}},
        },
        server_id=1,
        organization_id=1,
        generation="g",
    )
    assert not codemode.offered(snapshot)
    assert not routing.provided(snapshot, codemode.RUN)


def test_the_settings_are_validated_with_the_code_tools_limits():
    assert validate_server({"codeMode": {"enabled": True, "limits": {"cpuSeconds": 2}}}) == []
    assert validate_server({"codeMode": {"enabled": "yes", "limits": {"cpuSeconds": 0}, "x": 1}})
    problems = validate_server({"codeMode": {"enabled": "yes", "limits": {"lines": 3}}})
    assert "agents.codeMode.enabled: must be true or false" in problems
    assert any(p.startswith("agents.codeMode.limits.lines: unknown limit") for p in problems)


def test_the_description_states_the_shape_what_call_tool_returns_and_the_servers_limits():
    snapshot = snapshot_with(
        {"discovery": {"mode": "on"}, "codeMode": {"enabled": True, "limits": {"cpuSeconds": 2}}}
    )
    (tool,) = [
        t for t in routing.list_tools(snapshot, {}, NullContext()) if t["name"] == "getmcp_run_code"
    ]
    text = tool["description"]
    assert "async def main():" in text and "await call_tool(name, arguments)" in text
    assert '"structuredContent"' in text and '"isError": True' in text
    assert "2 s of CPU" in text and "30 s in all" in text and "64 MB" in text
    assert tool["inputSchema"]["required"] == ["code"]


@pytest.mark.parametrize(
    "source",
    ["", "   ", None, "x = 1\n", "def helper():\n    return 1\n"],
)
def test_a_program_without_main_is_refused_before_the_sandbox(source):
    with pytest.raises(ToolError, match="must define `async def main\\(\\):`"):
        codemode.program_of(source)


def test_a_program_calls_main_without_arguments_or_with_the_code_tools_shape():
    program, lines = codemode.program_of("async def main():\n    return 1\n")
    assert lines == 2 and "_getmcp_result = await main()" in program
    program, _ = codemode.program_of("def main():\n    return 1\n")
    assert "_getmcp_result = main()" in program
    program, _ = codemode.program_of("async def main(args):\n    return 1\n")
    assert "await main(args)" in program


def test_a_program_over_the_code_tools_size_is_refused_before_the_sandbox():
    source = "async def main():\n    return 1\n" + "# padding\n" * 7000
    with pytest.raises(ToolError, match="code longer than 64 KB"):
        codemode.program_of(source)
