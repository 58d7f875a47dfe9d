"""deploy/Caddyfile in a real Caddy in front of a live getmcp: TLS terminated, requests proxied,
and an event stream delivered event by event (a buffering proxy would hold it until it ends)."""

import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from tests.conftest import free_port
from tests.gateway.endpoint.conftest import tenant  # noqa: F401 (a fixture)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CADDYFILE = ROOT / "deploy" / "Caddyfile"


@pytest.fixture
def caddy(asgi_server, tmp_path):
    if shutil.which("caddy") is None:
        pytest.skip("caddy is not installed (apt-get install caddy; make test does it as root)")
    https_port = free_port()
    upstream = asgi_server.url.rsplit(":", 1)[1]
    env = {
        **os.environ,
        "DOMAIN": "localhost",
        "UPSTREAM": f"127.0.0.1:{upstream}",
        "HTTPS_PORT": str(https_port),
        "HTTP_PORT": str(free_port()),
        "CADDY_ADMIN": f"localhost:{free_port()}",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    log = tmp_path / "caddy.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            ["caddy", "run", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    root_ca = tmp_path / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    base = f"https://localhost:{https_port}"

    def answers() -> bool:
        if not root_ca.exists():
            return False
        try:
            trusted = ssl.create_default_context(cafile=str(root_ca))
            return httpx2.get(f"{base}/healthz", verify=trusted, timeout=2).is_success
        except httpx2.HTTPError:
            return False

    try:
        wait_until(answers, timeout=60, what=f"caddy on {base}\n{log.read_text()}")
        yield base, ssl.create_default_context(cafile=str(root_ca))
    finally:
        process.terminate()
        process.wait(20)


def test_the_caddyfile_terminates_tls_and_proxies_to_getmcp(caddy):
    base, root_ca = caddy
    response = httpx2.get(f"{base}/login/", verify=root_ca, timeout=10)
    assert response.status_code == 200
    assert response.http_version in ("HTTP/1.1", "HTTP/2")
    assert "getmcp" in response.text.lower()


def test_an_event_stream_passes_the_proxy_event_by_event(caddy, tenant):  # noqa: F811
    base, root_ca = caddy
    started = time.monotonic()
    with (
        httpx2.Client(verify=root_ca, timeout=10) as client,
        client.stream(
            "GET",
            f"{base}/mcp/{tenant.slug}/sse",
            headers={"authorization": f"Bearer {tenant.raw}", "accept": "text/event-stream"},
        ) as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        # The stream stays open for ever: its first event arrives only if nothing buffers it.
        for line in stream.iter_lines():
            if line.startswith("event: endpoint"):
                break
    assert time.monotonic() - started < 5
