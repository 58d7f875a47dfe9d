"""Clients of the platform deployed on several hosts: the official Python and TypeScript SDKs
through the balancer host, their connections landing on different web hosts, and an MCP task
started on one web host, run on the worker host and followed from another web host."""

import json
import shutil
import subprocess
from pathlib import Path

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests import node
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
NODE_FOLDER = ROOT / ".node-clients"
TS_SDK = {"@modelcontextprotocol/sdk": "1.32.2"}
TS_SCRIPT = "ts_calls.mjs"


def hosts_used(topology, before: dict[str, int]) -> list[str]:
    after = topology.balancer.connections_per_process()
    return [name for name in after if after[name] > before.get(name, 0)]


async def test_the_python_sdk_works_through_the_balancer_host_on_several_web_hosts(
    topology, tenant
):
    before = topology.balancer.connections_per_process()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant['key']}"})
    async with (
        http,
        Client(
            streamable_http_client(f"{topology.url}/mcp/{tenant['slug']}", http_client=http),
            mode="legacy",
        ) as client,
    ):
        tools = await client.list_tools()
        assert {"echo", "quick_task"} <= {tool.name for tool in tools.tools}
        for number in range(10):
            echoed = await client.call_tool("echo", {"message": f"call {number}"})
            assert echoed.content[0].text == f"You said call {number}"
    # The SDK's POSTs and its GET stream are separate connections: round robin spreads them.
    assert len(hosts_used(topology, before)) >= 2


def test_the_typescript_sdk_works_through_the_balancer_host_on_several_web_hosts(topology, tenant):
    binary = node.install(NODE_FOLDER, TS_SDK)
    # ESM resolves the SDK from the script's own directory.
    shutil.copy(Path(__file__).with_name(TS_SCRIPT), NODE_FOLDER / TS_SCRIPT)
    before = topology.balancer.connections_per_process()
    ran = subprocess.run(
        [str(binary), TS_SCRIPT, f"{topology.url}/mcp/{tenant['slug']}", tenant["key"], "6"],
        cwd=NODE_FOLDER,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("TOOLS ")
    assert {"echo", "quick_task"} <= set(json.loads(lines[0].removeprefix("TOOLS ")))
    assert lines[1:] == [f"RESULT You said ts {number}" for number in range(6)]
    assert len(hosts_used(topology, before)) >= 2


def test_a_task_started_on_one_web_host_is_followed_from_another(topology, tenant):
    first, second = topology.webs[0], topology.webs[1]
    starter = RawMcp(f"{first.url}/mcp/{tenant['slug']}", key=tenant["key"])
    starter.initialize()
    created = starter.call(
        "tools/call", {"name": "quick_task", "arguments": {"label": "far"}, "task": {"ttl": 60000}}
    )
    task_id = created["result"]["task"]["taskId"]
    # The same session, followed on the other web host.
    follower = RawMcp(f"{second.url}/mcp/{tenant['slug']}", key=tenant["key"])
    follower.session_id, follower.version = starter.session_id, starter.version

    def completed() -> bool:
        reply = follower.call("tasks/get", {"taskId": task_id})
        return reply["result"]["status"] == "completed"

    wait_until(completed, timeout=30, interval=0.2, what="the task to complete")
    result = follower.call("tasks/result", {"taskId": task_id})
    assert result["result"]["content"] == [{"type": "text", "text": "done far"}]
    starter.http.close()
    follower.http.close()
    # It ran on the worker host.
    assert "mcptasks.run_tool" in topology.worker.log.read_text(errors="replace")
