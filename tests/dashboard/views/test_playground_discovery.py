"""The playground shows what an agent sees of a server in discovery mode: the few tools it is
listed, and for a request, the ranking getmcp_search_tools answers with every score."""

import re

import pytest

from servers import embeddings, snapshot
from servers.definition import import_definition

TOOLS = [
    ("deleteUser", "Delete a user and all their data.", {"destructiveHint": True}),
    ("suspendUser", "Suspend a user so they can no longer sign in.", {"destructiveHint": False}),
    ("getUser", "Get a user's profile.", {"readOnlyHint": True}),
    ("removeTeamMember", "Remove a member from a team.", {"destructiveHint": True}),
    ("listTeamMembers", "List the members of a team.", {"readOnlyHint": True}),
]


def people_definition(slug: str = "people") -> dict:
    """A server in discovery mode with the issue's tools (tests/browser uses it too)."""
    return {
        "slug": slug,
        "name": "People",
        "agents": {"discovery": {"mode": "on"}},
        "tools": [
            {
                "name": name,
                "description": description,
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": False, **hints},
                "config": {"content": [{"type": "text", "text": "ok"}]},
            }
            for name, description, hints in TOOLS
        ],
    }


@pytest.fixture
def discovery_server(org):
    server = import_definition(people_definition(), org)
    embeddings.embed_server(server.pk)
    snapshot.clear_cache()
    return server


def rows(page: str) -> list[str]:
    table = page.split('id="pg-discover-results"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<td><span class="mono">([^<]+)</span>', table)


def test_the_playground_shows_the_meta_tools_an_agent_is_listed(member_client, discovery_server):
    page = member_client.get("/servers/people/playground/").content.decode()
    assert "What an agent sees: discovery mode" in page
    assert "getmcp_search_tools, getmcp_describe_tool, getmcp_call_tool" in page
    assert "instead of all 5" in page
    assert "embeddings of 5 of the 5 tools" in page


def test_a_search_shows_the_ranking_with_its_scores_and_hints(member_client, discovery_server):
    page = member_client.get(
        "/servers/people/playground/", {"discover": "ban a user from logging in"}
    ).content.decode()
    assert "Ranking: <strong>hybrid</strong>" in page
    assert "intent read as <strong>write</strong>" in page
    found = rows(page)
    assert found[0] == "suspendUser"
    assert found.index("suspendUser") < found.index("deleteUser")
    results = page.split('id="pg-discover-results"', 1)[1]
    assert "destructive" in results and re.search(r"#\d+ · 0\.\d{3}", results)


def test_a_read_request_shows_read_only_tools_first_and_says_why(member_client, discovery_server):
    page = member_client.get(
        "/servers/people/playground/", {"discover": "who is on the team?"}
    ).content.decode()
    assert "intent read as <strong>read</strong>" in page
    assert "read-only tools preferred, destructive ones last" in page
    found = rows(page)
    assert found[0] == "listTeamMembers"
    destructive = [i for i, name in enumerate(found) if name in {"deleteUser", "removeTeamMember"}]
    others = [i for i, name in enumerate(found) if i not in destructive]
    assert destructive and max(others) < min(destructive)


def test_a_server_without_discovery_shows_no_discovery_panel(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/playground/").content.decode()
    assert "pg-discovery" not in page
