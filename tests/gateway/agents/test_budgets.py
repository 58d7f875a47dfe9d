"""Where a result is cut, and how the budgets and settings are read and checked."""

from gateway.agents.budgets import clean_cut, client_limit
from servers.definition import normalize_definition, validate_definition
from servers.discovery import config


def test_a_cut_falls_after_a_line_when_one_is_near_the_limit():
    text = "alpha beta\n" * 20
    cut = clean_cut(text, 100)
    assert cut <= 100 and text[:cut].endswith("\n")


def test_compact_json_is_cut_after_an_element_and_prose_after_a_word():
    document = '[{"id": 1, "name": "a"},{"id": 2, "name": "b"},{"id": 3, "name": "c"}]'
    cut = clean_cut(document, 50)
    assert document[:cut].endswith("},")
    prose = "word " * 40
    assert prose[: clean_cut(prose, 52)].endswith(" ")
    assert clean_cut("x" * 100, 50) == 50


def test_a_clients_stated_limit_is_read_from_either_name_and_has_a_floor():
    assert client_limit({"_meta": {"getmcp/maxResultChars": 4000}}) == 4000
    assert client_limit({"_meta": {"anthropic/maxResultSizeChars": 9000}}) == 9000
    assert client_limit({"_meta": {"getmcp/maxResultChars": 10}}) == 500
    assert client_limit({"_meta": {"getmcp/maxResultChars": True}}) == 0
    assert client_limit({}) == 0


def test_the_budget_in_characters_is_the_smaller_of_its_bounds():
    assert config.char_limit(0, 25_000) == 100_000
    assert config.char_limit(5000, 25_000) == 5000
    assert config.char_limit(0, 0) == 0
    assert config.estimate_tokens(10) == 3


def test_the_definition_checks_the_agent_settings_and_keeps_them():
    definition = {
        "slug": "agents-check",
        "name": "x",
        "agents": {
            "discovery": {"mode": "on", "threshold": 5},
            "outputBudget": {"maxChars": 100, "ttlSeconds": 120},
            "longCalls": {"waitSeconds": 3},
        },
        "tools": [
            {
                "name": "t",
                "description": "d",
                "inputSchema": {"type": "object"},
                "pinned": True,
                "outputBudget": {"maxTokens": 10},
                "config": {"content": [{"type": "text", "text": "hi"}]},
            }
        ],
    }
    assert validate_definition(definition) == []
    normal = normalize_definition(definition)
    assert normal["agents"] == definition["agents"]
    assert normal["tools"][0]["pinned"] is True
    assert normal["tools"][0]["outputBudget"] == {"maxTokens": 10}
    bad = {
        **definition,
        "agents": {"discovery": {"mode": "sometimes"}, "longCalls": {"waitSeconds": -1}, "x": {}},
        "tools": [{**definition["tools"][0], "pinned": "yes", "outputBudget": {"maxChars": -1}}],
    }
    errors = validate_definition(bad)
    assert "agents.discovery.mode: must be one of auto, on, off" in errors
    assert any(e.startswith("agents.longCalls.waitSeconds:") for e in errors)
    assert "agents.x: unknown field" in errors
    assert any(e.startswith("tools[0].pinned:") for e in errors)
    assert any(e.startswith("tools[0].outputBudget.maxChars:") for e in errors)
