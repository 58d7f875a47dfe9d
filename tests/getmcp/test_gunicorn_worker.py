"""The gunicorn worker class the Docker image and docker-compose.yml serve with
(getmcp.http_protocol.UvicornWorker): a real gunicorn serves MCP calls through it and closes a
connection whose request head does not complete in time, as `uvicorn --http` does."""

import socket
import time

import httpx2
import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.faults.harness import mcp_call

HEADER_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def gunicorn(live_database):
    server = LiveServer(
        live_database,
        extra_env={"HTTP_HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT)},
        workers=2,
        gunicorn=True,
    )
    yield server
    server.stop()


def test_gunicorn_with_the_worker_class_serves_a_tools_call_and_health(gunicorn, committed, unique):
    def make():
        org = User.objects.create_user(f"g-{unique}@example.com", None).personal_organization()
        echo = {
            "name": "echo",
            "description": "Echo the text back.",
            "kind": "static",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "config": {"content": [{"type": "text", "text": "said {{ text }}"}]},
        }
        definition = {"slug": f"g-{unique}", "name": "g", "version": "1.0.0", "tools": [echo]}
        import_definition(definition | {"auth": "api_key"}, org)
        return ApiKey.issue(org, "gunicorn")[1]

    key = committed(make)
    assert httpx2.get(gunicorn.url + "/healthz", timeout=10).status_code == 200
    answer = mcp_call(
        gunicorn.url, f"g-{unique}", key, params={"name": "echo", "arguments": {"text": "hi"}}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "said hi"}]


def test_a_connection_trickling_its_request_head_is_closed_after_the_header_deadline(gunicorn):
    with socket.create_connection(("127.0.0.1", gunicorn.port), timeout=15) as sock:
        opened = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")  # never ends its head
        assert sock.recv(4096) == b""  # closed by the server, nothing answered
        closed_after = time.monotonic() - opened
    assert HEADER_TIMEOUT - 0.2 < closed_after < HEADER_TIMEOUT + 5
