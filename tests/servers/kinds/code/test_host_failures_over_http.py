"""A host call that fails is an exception the code can catch, never a JSON-RPC internal error:
driven by the official Python SDK through a live server, fetches refused by the SSRF guard, to a
host no DNS knows, to a port nobody listens on and to one that never answers each raise a
built-in exception in the sandbox (PermissionError, OSError, TimeoutError: all OSErrors), and
the same failure left uncaught is a tool result with `isError: true` that names it."""

import socket

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import LiveServer, free_port

from .live import code_tool_def, make_tenant

ERAS = ["legacy", "2026-07-28"]

CATCHING = """
async def main(args):
    try:
        r = await fetch(args["url"], timeout=args["timeout"])
        return "fetched " + str(r["status"])
    except PermissionError as exc:
        return "PermissionError: " + str(exc)
    except TimeoutError as exc:
        return "TimeoutError: " + str(exc)
    except OSError as exc:
        return "OSError: " + str(exc)
"""

UNCAUGHT = """
def main(args):
    return fetch(args["url"], timeout=args["timeout"])
"""

ANY_FAILURE = """
def main(args):
    failures = []
    for url in args["urls"]:
        try:
            fetch(url, timeout=2)
        except OSError as exc:
            failures.append(str(exc))
    return {"failures": failures}
"""

URL_ARGS = {
    "type": "object",
    "properties": {"url": {"type": "string"}, "timeout": {"type": "number"}},
}


@pytest.fixture(scope="module")
def live(live_database):
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(live_database, extra_env={"OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8"})
    yield server
    server.stop()


@pytest.fixture
def tenant(committed, unique):
    return make_tenant(
        committed,
        f"code-fail-{unique}",
        [
            code_tool_def("catching", CATCHING, inputSchema=URL_ARGS),
            code_tool_def("uncaught", UNCAUGHT, inputSchema=URL_ARGS),
            code_tool_def("any_failure", ANY_FAILURE),
        ],
    )


@pytest.fixture
def refusing_port() -> int:
    """A loopback port nobody listens on: a connection there is refused at once."""
    return free_port()


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def client_for(live, tenant, mode) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant.raw}"})
    return Client(streamable_http_client(live.mcp_url(tenant.slug), http_client=http), mode=mode)


def failing_urls(refusing_port: int, silent_port: int) -> dict[str, str]:
    return {
        "ssrf": "http://169.254.169.254/latest/meta-data/",
        "dns": "http://no-such-host.invalid/",
        "refused": f"http://127.0.0.1:{refusing_port}/",
        "silent": f"http://127.0.0.1:{silent_port}/",
    }


EXPECTED = {
    "ssrf": "PermissionError: Requests to 169.254.169.254 are not allowed",
    "dns": "OSError: The host no-such-host.invalid could not be resolved.",
    "refused": "OSError: The request failed: could not connect to the server.",
    "silent": "TimeoutError: The request timed out after 0.5 seconds.",
}


@pytest.mark.parametrize("mode", ERAS)
async def test_each_failed_fetch_raises_an_exception_the_code_catches(
    live, tenant, refusing_port, silent_port, mode
):
    urls = failing_urls(refusing_port, silent_port)
    async with client_for(live, tenant, mode) as client:
        for case, url in urls.items():
            result = await client.call_tool("catching", {"url": url, "timeout": 0.5})
            assert result.is_error is False, (case, result.content)
            assert result.content[0].text.startswith(EXPECTED[case]), (case, result.content)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_failed_fetch_left_uncaught_is_a_tool_error_that_names_it(
    live, tenant, refusing_port, silent_port, mode
):
    urls = failing_urls(refusing_port, silent_port)
    async with client_for(live, tenant, mode) as client:
        for case, url in urls.items():
            result = await client.call_tool("uncaught", {"url": url, "timeout": 0.5})
            assert result.is_error is True, (case, result.content)
            text = result.content[0].text
            assert text.startswith("The code raised an error:"), (case, text)
            assert 'File "main.py", line 3, in main' in text, (case, text)
            assert EXPECTED[case] in text, (case, text)
            assert "Internal error" not in text and "ConnectionError" not in text


async def test_one_except_oserror_catches_every_kind_of_fetch_failure(
    live, tenant, refusing_port, silent_port
):
    urls = list(failing_urls(refusing_port, silent_port).values())
    async with client_for(live, tenant, "legacy") as client:
        result = await client.call_tool("any_failure", {"urls": urls})
    assert result.is_error is False, result.content
    failures = result.structured_content["failures"]
    assert len(failures) == 4
    assert "not allowed" in failures[0]
    assert "could not be resolved" in failures[1]
    assert "could not connect" in failures[2]
    assert "timed out after 2 seconds" in failures[3]
