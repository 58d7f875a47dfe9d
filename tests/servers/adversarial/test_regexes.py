"""A tenant's regular expressions run in linear time (RE2) or are refused when saved."""

import pytest

from servers.definition import DefinitionError, import_definition

from .conftest import static_tool, tool_text, under_attack

EVIL = "^(a+)+$"


EVIL_TEXT = "a" * 50_000 + "!"
CASES = {
    # name: (inputSchema, arguments, whether the arguments are invalid)
    "pattern": (
        {"type": "object", "properties": {"s": {"type": "string", "pattern": EVIL}}},
        {"s": EVIL_TEXT},
        True,
    ),
    "patternProperties": (
        {"type": "object", "patternProperties": {EVIL: {"type": "string"}}},
        {EVIL_TEXT: 1},
        False,  # the key does not match, so nothing constrains it: valid
    ),
    "additionalProperties": (
        {"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False},
        {EVIL_TEXT: 1},
        True,
    ),
    "format-regex": (
        {"type": "object", "properties": {"s": {"type": "string", "format": "regex"}}},
        {"s": "(a+)+" * 2_000 + "("},
        True,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_catastrophic_patterns_answer_at_once_while_other_tenants_stay_fast(name, attacker, victim):
    schema, arguments, invalid = CASES[name]
    tenant = attacker(tools=[static_tool("check", "ok", input_schema=schema)])

    def attack():
        return tenant.client.call("tools/call", {"name": "check", "arguments": arguments})

    reply = under_attack(attack, victim, f"regex {name}").answer
    if invalid:
        assert reply["result"]["isError"] is True
        assert "Invalid arguments" in tool_text(reply)
    else:
        assert tool_text(reply) == "ok"


@pytest.mark.parametrize(
    "pattern", ["(?=a)b", r"(a)\1", "(a{1000}){1000}", "x" * 1001], ids=str.__len__
)
def test_a_pattern_re2_cannot_run_is_refused_when_saved(committed, org, pattern):
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    definition = {
        "slug": "regex-refused",
        "name": "regex",
        "tools": [static_tool("t", "x", input_schema=schema)],
    }
    with pytest.raises(DefinitionError) as raised:
        import_definition(definition, org)
    assert "tools[0].inputSchema.properties.s.pattern" in str(raised.value)
    assert "not a regular expression this platform runs" in str(raised.value)


def test_unevaluated_properties_beside_pattern_properties_is_refused(org):
    schema = {
        "type": "object",
        "patternProperties": {"^x": {}},
        "unevaluatedProperties": False,
    }
    definition = {
        "slug": "regex-uneval",
        "name": "regex",
        "tools": [static_tool("t", "x", input_schema=schema)],
    }
    with pytest.raises(DefinitionError) as raised:
        import_definition(definition, org)
    assert "unevaluatedProperties" in str(raised.value)
