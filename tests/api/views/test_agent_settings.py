"""The API carries the agent settings of a server and the pinned flag and budget of a tool, and
refuses what the definition format refuses."""

from servers.models import Server, Tool

from ..conftest import ECHO

AGENTS = {
    "discovery": {"mode": "on", "threshold": 12},
    "outputBudget": {"maxChars": 8000, "ttlSeconds": 600},
    "longCalls": {"waitSeconds": 20},
}


def test_a_servers_agent_settings_are_read_and_written_through_the_api(api, server):
    patched = api.patch("/api/servers/weather/", {"agents": AGENTS}, format="json")
    assert patched.status_code == 200, patched.json()
    assert patched.json()["agents"] == AGENTS
    assert Server.objects.get(slug="weather").agents == AGENTS
    refused = api.patch(
        "/api/servers/weather/", {"agents": {"discovery": {"mode": "maybe"}}}, format="json"
    )
    assert refused.status_code == 400
    assert "agents" in str(refused.json())


def test_a_tools_pinned_flag_and_budget_are_written_through_the_api(api, server):
    created = api.post(
        "/api/servers/weather/tools/",
        {**ECHO, "name": "pinned_echo", "pinned": True, "outputBudget": {"maxTokens": 500}},
        format="json",
    )
    assert created.status_code == 201, created.json()
    tool = Tool.objects.get(server__slug="weather", name="pinned_echo")
    assert tool.pinned and tool.output_budget == {"maxTokens": 500}
    refused = api.post(
        "/api/servers/weather/tools/",
        {**ECHO, "name": "other", "outputBudget": {"maxTokens": -5}},
        format="json",
    )
    assert refused.status_code == 400
