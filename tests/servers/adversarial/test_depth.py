"""Arguments, bodies and schemas nested without end get a clean 400 or a validation error, not
a 500 with a huge traceback (which a server that logs arguments used to give after the tool
had already run)."""

import httpx2
import pytest

from servers.changes import bump_server
from servers.definition import DefinitionError, import_definition
from servers.models import Tool

from .conftest import static_tool, tool_text, under_attack


def nested(depth: int) -> str:
    """JSON text of objects nested `depth` deep (json.dumps itself would recurse too deep)."""
    return '{"d": ' * depth + '"bottom"' + "}" * depth


def test_arguments_nested_1000_deep_are_refused_before_the_tool_runs(attacker, victim):
    schema = {"type": "object", "properties": {"d": {}}}
    tenant = attacker(logArguments=True, tools=[static_tool("echo", "ran {{ d }}", schema)])
    body = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
        f'"params": {{"name": "echo", "arguments": {nested(1000)}}}}}'
    )

    def attack():
        return tenant.client.http.post(
            tenant.client.url, content=body, headers=tenant.client.headers()
        )

    response = under_attack(attack, victim, "arguments nested 1000 deep").answer
    assert response.status_code == 400
    assert response.json()["id"] == 7
    assert "nested deeper than 64 levels" in response.json()["error"]["message"]
    assert "Traceback" not in response.text


def test_a_rest_call_nested_1000_deep_is_a_400(asgi_server, attacker):
    tenant = attacker(tools=[static_tool("echo", "ran")])
    response = httpx2.post(
        f"{asgi_server.url}/mcp/{tenant.slug}/tools/echo",
        content=nested(1000),
        headers={"authorization": f"Bearer {tenant.raw}", "content-type": "application/json"},
    )
    assert response.status_code == 400
    assert "nested deeper" in response.json()["error"]


def test_a_self_referential_ref_is_refused_when_saved(org):
    definition = {
        "slug": "selfref",
        "name": "selfref",
        "tools": [static_tool("t", "x", input_schema={"type": "object", "$ref": "#"})],
    }
    with pytest.raises(DefinitionError) as raised:
        import_definition(definition, org)
    assert "refers back to itself" in str(raised.value)


def test_a_stored_self_referential_ref_makes_the_server_answer_a_clean_503(committed, attacker):
    """Saved before the check existed: the definition no longer compiles, and the owner gets
    a JSON error instead of a RecursionError on each call."""
    tenant = attacker(tools=[static_tool("t", "ran")])

    def store():
        Tool.objects.filter(server=tenant.server).update(
            input_schema={"type": "object", "$ref": "#"}
        )
        bump_server(tenant.slug)

    committed(store)
    response, _ = tenant.client.request("tools/call", {"name": "t", "arguments": {}})
    assert response.status_code == 503
    assert response.json()["error"]["message"] == "This MCP server's definition is invalid"


def test_an_exponential_schema_is_a_clean_validation_error(committed, attacker, victim):
    """Nested anyOf over $refs, no cycle: 2**40 paths. Validation stops at its budget."""
    schema = {
        "type": "object",
        "$defs": {
            **{
                f"n{i}": {"anyOf": [{"$ref": f"#/$defs/n{i + 1}"}, {"$ref": f"#/$defs/n{i + 1}"}]}
                for i in range(40)
            },
            "n40": {"type": "string"},
        },
        "$ref": "#/$defs/n0",
    }
    tenant = attacker(tools=[static_tool("t", "ran", input_schema=schema)])
    assert tenant.client.call("tools/list")["result"]["tools"]  # compiled before the attack

    def attack():
        return tenant.client.call("tools/call", {"name": "t", "arguments": {}})

    reply = under_attack(attack, victim, "exponential schema").answer
    assert reply["result"]["isError"] is True
    assert "took longer than" in tool_text(reply)
