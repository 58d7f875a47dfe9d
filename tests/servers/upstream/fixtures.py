"""A real upstream MCP server (tests/servers/upstream/upstream_server.py, the official SDK) in a
subprocess on a free loopback port, and a client context that records what is relayed to it."""

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import McpError
from tests.waiting import listening

SCRIPT = Path(__file__).resolve().parent / "upstream_server.py"
TOKEN = "upstream-test-token-5f1c"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class UpstreamProcess:
    def __init__(self, transport: str = "streamable-http", token: str = ""):
        self.port = free_port()
        self.transport = transport
        path = "/sse" if transport == "sse" else "/mcp"
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(self.port), transport, token],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            listening(self.port, self.process, timeout=30, what="the upstream")
        except AssertionError:
            self.stop()
            raise

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def upstream():
    """Streamable HTTP, no auth; shared by a module's tests (starting one takes seconds)."""
    process = UpstreamProcess()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def guarded_upstream():
    """Streamable HTTP that answers 401 without `Authorization: Bearer TOKEN`."""
    process = UpstreamProcess(token=TOKEN)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def sse_upstream():
    process = UpstreamProcess(transport="sse")
    yield process
    process.stop()


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = "127.0.0.0/8"


class RecordingContext(RequestContext):
    """Our client, as a tool sees it: records logs and progress, answers requests from a script."""

    def __init__(self, answers=None, capabilities=("elicitation", "sampling", "roots")):
        self.protocol_version = "2025-11-25"
        self.client_capabilities = {name: {} for name in capabilities}
        self.client_info = {"name": "test-client", "version": "1"}
        self.credential = "anon"
        self.answers = answers or {}
        self.logs: list[tuple] = []
        self.progress_events: list[tuple] = []
        self.requests: list[tuple] = []

    async def log(self, level, data, logger=None):
        self.logs.append((level, data, logger))

    async def progress(self, progress, total=None, message=None):
        self.progress_events.append((progress, total, message))

    async def request(self, key, method, params):
        self.requests.append((key, method, params))
        answer = self.answers.get(method)
        if answer is None:
            raise McpError(-32021, f"no answer scripted for {method}")
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def sleep(self, seconds):
        import asyncio

        await asyncio.sleep(seconds)  # deliberate: the context's sleep, asked for by the tool


def run_upstream_tool(row, arguments, ctx=None):
    """Call an `upstream` tool row through its kind, as a snapshot would."""
    from asgiref.sync import async_to_sync

    from servers.kinds import upstream as kind

    tool_def = {
        "name": row.name,
        "config": row.config,
        "_server": {"id": row.server_id, "organizationId": row.server.organization_id},
    }
    return async_to_sync(kind.call)(kind.compile(tool_def), arguments, ctx or RecordingContext())


def served_snapshot(server):
    """The server's definition compiled, as its endpoint would serve it."""
    from servers.snapshot import compile_definition, definition_for

    return compile_definition(
        definition_for(server),
        server_id=server.pk,
        organization_id=server.organization_id,
        generation="1",
    )
