"""The hybrid search through a live server with the official Python SDK: once a discovery
server's embeddings are computed, getmcp_search_tools ranks by meaning as well as words, read
requests keep destructive tools out of the top, and the answer says which ranking it used."""

import asyncio

import pytest

from accounts.models import ApiKey, User
from gateway.agents.discovery import SEARCH
from servers import embeddings
from servers.definition import import_definition
from servers.discovery import embedding
from servers.discovery.vectors import tool_document
from servers.models import ToolEmbedding
from tests.gateway.agents.conftest import sdk_client

TOOLS = [
    ("deleteUser", "Delete a user and all their data.", "delete"),
    ("suspendUser", "Suspend a user so they can no longer sign in.", "post"),
    ("getUser", "Get a user's profile.", "get"),
    ("removeTeamMember", "Remove a member from a team.", "delete"),
    ("addTeamMember", "Add a member to a team.", "post"),
    ("listTeamMembers", "List the members of a team.", "get"),
    ("createUser", "Create a user.", "post"),
    ("countTickets", "Count the tickets matching a filter.", "get"),
    ("deleteTicket", "Delete a ticket.", "delete"),
    ("createTicket", "Create a ticket.", "post"),
]
HINTS = {
    "get": {"readOnlyHint": True},
    "post": {"readOnlyHint": False, "destructiveHint": False},
    "delete": {"readOnlyHint": False, "destructiveHint": True},
}


def make_server(unique):
    user = User.objects.create_user(f"hybrid-{unique}@example.com", "long enough password 1")
    org = user.personal_organization()
    slug = f"hy-{unique}"
    definition = {
        "slug": slug,
        "name": slug,
        "auth": "api_key",
        "agents": {"discovery": {"mode": "on"}},
        "tools": [
            {
                "name": name,
                "description": description,
                "inputSchema": {"type": "object"},
                "annotations": HINTS[kind],
                "config": {"content": [{"type": "text", "text": "ok"}]},
            }
            for name, description, kind in TOOLS
        ],
    }
    server = import_definition(definition, org)
    # Vectors are shared by text across servers: start from none for these texts.
    texts = [tool_document(tool) for tool in definition["tools"]]
    ToolEmbedding.objects.filter(digest__in=[embedding.digest(t) for t in texts]).delete()
    _key, raw = ApiKey.issue(org, "hybrid key")
    return server, raw


@pytest.fixture
def hybrid_server(committed, unique):
    return committed(make_server, unique)


async def search(client, query, limit=3):
    found = await client.call_tool(SEARCH, {"query": query, "limit": limit})
    content = found.structured_content
    return content["ranking"], [tool["name"] for tool in content["tools"]]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_search_ranks_by_meaning_once_the_embeddings_are_computed(
    asgi_server, committed, hybrid_server, mode
):
    server, raw = hybrid_server
    url = asgi_server.mcp_url(server.slug)
    async with sdk_client(url, raw, mode) as client:
        ranking, _ = await search(client, "kick someone off the team")
        assert ranking == "lexical"  # nothing computed yet: words alone, and it says so
    # What the publish job does (here by hand: no worker runs in this test).
    assert await asyncio.to_thread(committed, embeddings.embed_server, server.pk) == len(TOOLS)
    async with sdk_client(url, raw, mode) as client:
        ranking, names = await search(client, "kick someone off the team")
        assert ranking == "hybrid"
        assert names[0] == "removeTeamMember"
        _, names = await search(client, "ban a user from logging in", 10)
        assert names[0] == "suspendUser"
        assert names.index("suspendUser") < names.index("deleteUser")
        _, names = await search(client, "how many open tickets")
        assert names[0] == "countTickets"
        # A read request: the destructive tool, if listed at all, comes after every other.
        assert "deleteTicket" not in names[:-1]
