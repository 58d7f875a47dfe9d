"""Searching a discovery server's tools computes the query's embedding in the shared process:
a burst of long, distinct queries (none cached) leaves another tenant's ping fast."""

from servers import embeddings

from .conftest import static_tool, under_attack

WORDS = [
    "invoice",
    "customer",
    "refund",
    "shipment",
    "ticket",
    "agent",
    "report",
    "export",
    "archive",
    "restore",
]


def test_a_burst_of_long_searches_leaves_other_tenants_fast(attacker, victim, committed):
    tools = [static_tool(f"{w}_{v}", f"{v} one {w}") for w in WORDS for v in ("get", "make")]
    tenant = attacker(tools=tools, agents={"discovery": {"mode": "on"}})
    assert committed(embeddings.embed_server, tenant.server.pk) == len(tools)
    search = "getmcp_search_tools"
    # The first search loads the model in the server process (on its thread, not the loop).
    warm = tenant.client.call("tools/call", {"name": search, "arguments": {"query": "warm up"}})
    assert warm["result"]["structuredContent"]["ranking"] == "hybrid"

    def attack():
        answers = []
        for i in range(8):
            query = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(60))[:500] + f" {i}"
            answers.append(
                tenant.client.call("tools/call", {"name": search, "arguments": {"query": query}})
            )
        return answers

    measured = under_attack(attack, victim, "tool search burst")
    assert all(a["result"]["structuredContent"]["tools"] for a in measured.answer)
