"""What the fault tests of the multi-host topology share: calls, clocks and tool changes."""

import time

import httpx2

from tests.faults.harness import answer_of, mcp_call
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.multihost.conftest import on_topology

# The stream readers of the single-host balancer tests, for the tests importing them from here.
from tests.scale.test_behind_a_balancer import listed_changes, read_events  # noqa: F401
from tests.waiting import wait_until

CHANGE_TOOL = """
from servers.models import Tool
tool = Tool.objects.get(server__slug={slug!r}, name="echo")
tool.description = {description!r}
tool.save()
result = True
"""


def echoes(url: str, slug: str, key: str, timeout: float = 10) -> bool:
    """A stateless tools/call on a new connection answers with the echo."""
    try:
        response = mcp_call(url, slug, key, timeout=timeout)
    except httpx2.HTTPError:
        return False
    if response.status_code != 200:
        return False
    result = answer_of(response).get("result") or {}
    return result.get("content") == [{"type": "text", "text": "You said hi"}]


def seconds_until(condition, *, timeout: float, what: str, interval: float = 0.05) -> float:
    started = time.monotonic()
    wait_until(condition, timeout=timeout, interval=interval, what=what)
    return time.monotonic() - started


def all_up(topology) -> bool:
    return all(state == "UP" for state in topology.balancer.status().values())


def change_tool(topology, slug: str, description: str) -> None:
    on_topology(topology, CHANGE_TOOL.format(slug=slug, description=description))


def session(topology, tenant) -> RawMcp:
    client = RawMcp(f"{topology.url}/mcp/{tenant['slug']}", key=tenant["key"])
    client.initialize()
    return client


def joined(topology, tenant, existing: RawMcp) -> RawMcp:
    """A client in an existing session, on a connection of its own (so the balancer picks)."""
    client = RawMcp(f"{topology.url}/mcp/{tenant['slug']}", key=tenant["key"])
    client.session_id, client.version = existing.session_id, existing.version
    return client
