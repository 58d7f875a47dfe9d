"""getmcp as it is scaled out: three web processes behind a plain round-robin TCP balancer
(haproxy, no sticky sessions) and two Celery workers, all on one Postgres and one Redis.

The official Python SDK works through the balancer while its connections land on different
processes; a task runs on the workers and is followed from any process; and a client whose SSE
stream's process is killed resumes on another process with Last-Event-ID, losing nothing.
(The whole official conformance suite runs through the same balancer in scripts/conformance.sh,
CONFORMANCE_BALANCED=3, in CI.)"""

import json
import signal
import socket
import subprocess
import time

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from accounts.models import ApiKey, User
from scripts import balancer
from servers.definition import import_definition
from servers.models import Tool
from tests.celery_workers import running_workers, wait_until
from tests.conftest import LiveServer, free_port
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp, parse_sse

PROCESSES = 3
QUICK_TASK = {
    "name": "quick_task",
    "description": "Works a little, then answers.",
    "inputSchema": {"type": "object", "properties": {"label": {"type": "string"}}},
    "execution": {"taskSupport": "optional"},
    "kind": "workflow",
    "config": {
        "steps": [
            {"sleep": {"ms": 300}},
            {"return": {"content": [{"type": "text", "text": "done {{ label }}"}]}},
        ]
    },
}


class Balancer:
    """haproxy on a free port over the given web processes, with its admin socket."""

    def __init__(self, backends: list[LiveServer], workdir):
        self.backends = backends
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self.socket_path = str(workdir / "haproxy.sock")
        config = workdir / "haproxy.cfg"
        config.write_text(
            balancer.config(
                port=self.port,
                backends=[f"127.0.0.1:{server.port}" for server in backends],
                stats_socket=self.socket_path,
            )
        )
        self._log = open(workdir / "haproxy.log", "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            balancer.command(config), stdout=self._log, stderr=subprocess.STDOUT
        )
        wait_until(self._answers, timeout=20, what="the balancer to answer")

    def _answers(self) -> bool:
        try:
            httpx2.get(self.url + "/mcp/-", timeout=1)
            return True
        except httpx2.HTTPError:
            return False

    def admin(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(self.socket_path)
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def connections_per_process(self) -> dict[str, int]:
        """Connections each web process has been given so far (haproxy's stot)."""
        rows = self.admin("show stat").splitlines()
        header = rows[0].lstrip("# ").split(",")
        totals = {}
        for row in rows[1:]:
            fields = dict(zip(header, row.split(","), strict=False))
            if fields.get("pxname") == "web" and fields.get("svname", "").startswith("web"):
                totals[fields["svname"]] = int(fields["stot"])
        return totals

    def open_connections(self) -> dict[str, str]:
        """Each connection open through the balancer right now -> the web process it is on."""
        found = {}
        for line in self.admin("show sess").splitlines():
            parts = line.split()
            process = next((p for p in parts if p.startswith("srv=web")), None)
            if parts and process:
                found[parts[0]] = process.removeprefix("srv=")
        return found

    def backend(self, name: str) -> LiveServer:
        return self.backends[int(name.removeprefix("web")) - 1]

    def stop(self):
        self.process.terminate()
        self.process.wait(10)
        self._log.close()


@pytest.fixture(scope="module")
def balanced(live_database, tmp_path_factory):
    if not balancer.installed():
        pytest.skip("haproxy is not installed (apt-get install haproxy; make test does it as root)")
    servers = [LiveServer(live_database) for _ in range(PROCESSES)]
    front = Balancer(servers, tmp_path_factory.mktemp("balancer"))
    yield front
    front.stop()
    for server in servers:
        if server.process.poll() is None:
            server.stop()


@pytest.fixture(scope="module")
def workers(live_database, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("workers")) as start:
        yield [start(), start()]


@pytest.fixture
def tenant(committed, unique):
    def make():
        user = User.objects.create_user(f"scale-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = server_definition(f"s-{unique}")
        definition["tools"].append(QUICK_TASK)
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "scale key")
        return server, raw

    server, raw = committed(make)
    return server, raw


async def test_the_python_sdk_works_through_the_balancer_on_several_processes(balanced, tenant):
    server, raw = tenant
    before = balanced.connections_per_process()
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {raw}"})
    async with Client(
        streamable_http_client(f"{balanced.url}/mcp/{server.slug}", http_client=http),
        mode="legacy",
    ) as client:
        tools = await client.list_tools()
        assert {"echo", "quick_task"} <= {tool.name for tool in tools.tools}
        for number in range(10):
            echoed = await client.call_tool("echo", {"message": f"call {number}"})
            assert echoed.content[0].text == f"You said call {number}"
    after = balanced.connections_per_process()
    used = [name for name in after if after[name] > before.get(name, 0)]
    # The SDK's POSTs and its GET stream are separate connections: round robin spreads them.
    assert len(used) >= 2, (before, after)


def fresh_client(balanced, slug: str, raw: str, session: RawMcp | None = None) -> RawMcp:
    """A client on a new connection (so the balancer picks the next process), in a session."""
    client = RawMcp(f"{balanced.url}/mcp/{slug}", key=raw)
    if session is not None:
        client.session_id, client.version = session.session_id, session.version
    return client


def test_a_task_runs_on_the_workers_and_any_process_reports_it(balanced, workers, tenant):
    server, raw = tenant
    starter = fresh_client(balanced, server.slug, raw)
    starter.initialize()
    created = starter.call(
        "tools/call", {"name": "quick_task", "arguments": {"label": "x"}, "task": {"ttl": 60000}}
    )
    task_id = created["result"]["task"]["taskId"]

    def status() -> str:
        # Every poll opens its own connection: each lands on the next process.
        reply = fresh_client(balanced, server.slug, raw, starter).call(
            "tasks/get", {"taskId": task_id}
        )
        return reply["result"]["status"] == "completed" and reply["result"]["status"]

    wait_until(status, timeout=30, what="the task to complete")
    result = fresh_client(balanced, server.slug, raw, starter).call(
        "tasks/result", {"taskId": task_id}
    )
    assert result["result"]["content"] == [{"type": "text", "text": "done x"}]


def read_events(response, until, seconds: float = 15) -> list[dict]:
    """SSE events of a streaming response until until(events) holds."""
    buffer, events = "", []
    deadline = time.monotonic() + seconds
    for chunk in response.iter_text():
        buffer += chunk
        events = [e for e in parse_sse(buffer) if isinstance(e["data"], dict)]
        if until(events) or time.monotonic() > deadline:
            break
    return events


def listed_changes(events) -> list[dict]:
    return [e for e in events if e["data"].get("method") == "notifications/tools/list_changed"]


def change_a_tool(committed, server, description: str) -> None:
    def change():
        tool = Tool.objects.get(server=server, name="echo")
        tool.description = description
        tool.save()

    committed(change)


def test_a_stream_whose_process_is_killed_resumes_on_another_with_nothing_lost(
    balanced, tenant, committed
):
    server, raw = tenant
    session = fresh_client(balanced, server.slug, raw)
    session.initialize()
    session.http.close()  # only the stream's connection stays open through the balancer

    listener = fresh_client(balanced, server.slug, raw, session)
    headers = listener.headers(accept="text/event-stream")
    before = balanced.open_connections()
    with listener.http.stream("GET", listener.url, headers=headers, timeout=30) as stream:
        assert stream.status_code == 200
        holding = [
            process
            for connection, process in balanced.open_connections().items()
            if connection not in before
        ]
        assert len(holding) == 1
        change_a_tool(committed, server, "first change")
        first = listed_changes(read_events(stream, lambda events: listed_changes(events)))
        assert len(first) == 1 and first[0]["id"]
        # The process serving the stream dies without a chance to say goodbye.
        balanced.backend(holding[0]).process.send_signal(signal.SIGKILL)
        balanced.backend(holding[0]).process.wait(10)

    # While no stream is open, the tool changes again: the notification waits in Redis.
    change_a_tool(committed, server, "second change")
    resumed_client = fresh_client(balanced, server.slug, raw, session)
    resume_headers = {**headers, "last-event-id": first[0]["id"]}
    before = balanced.open_connections()
    with resumed_client.http.stream(
        "GET", resumed_client.url, headers=resume_headers, timeout=30
    ) as resumed:
        assert resumed.status_code == 200
        now_holding = [
            process
            for connection, process in balanced.open_connections().items()
            if connection not in before
        ]
        events = read_events(resumed, lambda events: listed_changes(events), seconds=10)
    assert len(now_holding) == 1 and now_holding != holding
    # Exactly the change made after the last event seen: none lost, none repeated.
    second = listed_changes(events)
    assert len(second) == 1 and second[0]["id"] != first[0]["id"]
    assert json.dumps(second[0]["data"]) == json.dumps(first[0]["data"])
