"""The doctor against a live server: a healthy server, and each broken set-up it must name
(wrong key, Origin refused, paused server, SSE held back by a buffering proxy), OAuth discovery
for an OAuth server, and the SSRF guard's refusal of a private SITE_URL without the setting."""

import contextlib
import http.server
import threading
import time

import httpx2
import pytest
from django.core.management import CommandError, call_command

from accounts.models import ApiKey, User
from integrations.doctor.service import diagnose
from servers.definition import import_definition
from servers.models import Server
from tests.gateway.endpoint.conftest import server_definition


@pytest.fixture
def world(committed, unique):
    def make(auth="api_key", **overrides):
        user = User.objects.create_user(f"doc-{unique}-{auth}@example.com", "long password 1")
        server = import_definition(
            server_definition(
                f"doc-{unique}-{auth.replace('+', '').replace('_', '')}", auth=auth, **overrides
            ),
            user.personal_organization(),
        )
        return user, server

    return lambda **kw: committed(make, **kw)


def run(committed, server, **kwargs):
    return committed(lambda: diagnose(server=server, **kwargs))


def statuses(report) -> dict:
    return {step.name: step.status for step in report.steps}


def test_a_healthy_server_passes_every_client_check(doctor_settings, world, committed):
    user, server = world()
    report = run(committed, server, user=user)
    got = statuses(report)
    assert report.healthy, [(s.name, s.detail, s.response) for s in report.steps]
    for name in ("initialize", "revision negotiation", "tools/list", "ping", "SSE streaming"):
        assert got[name] == "pass", name
    assert "2025-06-18→2025-06-18" in report.step("revision negotiation").detail
    assert "echo" in report.step("tools/list").detail
    # On loopback over http: a local install, what cannot apply is skipped with its reason.
    assert got["https"] == got["public address"] == "skip"
    assert "Not checked on a local install" in report.step("public address").detail
    assert "a loopback address" in report.step("public address").detail
    assert got["site answers"] == "pass"
    # A key-only server: the OAuth-only apps are told they cannot connect, and how to fix it.
    assert got["401 challenge"] == "warn"
    assert "api_key+oauth" in report.step("401 challenge").fix
    # The temporary key never shows and is revoked afterwards.
    temporary = committed(lambda: list(ApiKey.objects.filter(organization=server.organization)))
    assert len(temporary) == 1 and temporary[0].revoked_at is not None
    init = report.step("initialize")
    assert "Bearer ***" in init.request and "gmcp_" not in init.request


def test_a_wrong_key_is_named_with_its_fix(doctor_settings, world, committed):
    user, server = world()
    report = run(committed, server, user=user, key="gmcp_wrong_key_123456")
    step = report.step("initialize")
    assert step.status == "fail"
    assert "403" in step.detail and "refused" in step.detail
    assert "Connect page" in step.fix
    assert "gmcp_wrong_key_123456" not in step.request + step.response
    assert report.step("tools/list").status == "skip"
    assert not report.healthy


def test_an_origin_the_server_refuses_is_named_with_its_fix(doctor_settings, world, committed):
    user, server = world()
    report = run(committed, server, user=user, origin="https://app.example.com")
    step = report.step("CORS")
    assert step.status == "fail"
    assert "https://app.example.com" in step.detail and "403" in step.detail
    assert "allowed origins" in step.fix

    def allow():
        fresh = Server.objects.get(pk=server.pk)
        fresh.allowed_origins = ["https://app.example.com"]
        fresh.save()

    committed(allow)
    report = run(committed, server, user=user, origin="https://app.example.com")
    assert report.step("CORS").status == "pass"


def test_a_paused_server_is_named_with_its_fix(doctor_settings, world, committed):
    user, server = world(status="paused")
    report = run(committed, server, user=user)
    step = report.step("initialize")
    assert step.status == "fail"
    assert "paused" in step.detail and "Resume" in step.fix


class BufferingProxy(http.server.ThreadingHTTPServer):
    """Forwards to the live server but sends nothing until the upstream answer is complete, as
    a proxy with response buffering on does (a stream that never ends: cut after `hold` s)."""

    daemon_threads = True

    def __init__(self, upstream: str, hold: float):
        self.upstream, self.hold = upstream, hold
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://localhost:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        sent = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        chunks, status, headers = [], 502, {}
        deadline = time.monotonic() + self.server.hold
        try:
            with (
                httpx2.Client(timeout=self.server.hold) as client,
                client.stream(
                    self.command, self.server.upstream + self.path, headers=sent, content=body
                ) as response,
            ):
                status, headers = response.status_code, response.headers
                for chunk in response.iter_raw():
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        break
        except httpx2.HTTPError:
            pass  # the held stream, cut: what arrived is sent now
        payload = b"".join(chunks)
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")
        self.end_headers()
        with contextlib.suppress(OSError):  # the doctor stopped waiting long ago
            self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_OPTIONS = forward


def test_a_proxy_that_buffers_sse_is_named_with_its_fix(
    doctor_settings, doctor_live, world, committed
):
    user, server = world()
    proxy = BufferingProxy(doctor_live.url, hold=6)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        doctor_settings.SITE_URL = proxy.url
        report = run(committed, server, user=user)
    finally:
        proxy.shutdown()
    # Everything else works through the proxy; only the stream is held back.
    assert report.step("tools/list").status == "pass"
    step = report.step("SSE streaming")
    assert step.status == "fail", (step.detail, step.response)
    assert "buffers server-sent events" in step.detail
    assert "proxy_buffering off" in step.fix


def test_an_oauth_server_is_discovered_as_claude_ai_and_chatgpt_do(
    doctor_settings, world, committed
):
    user, server = world(auth="oauth")
    report = run(committed, server, user=user)
    got = statuses(report)
    for name in (
        "401 challenge",
        "resource metadata",
        "authorization server metadata",
        "registration",
        "authorization",
    ):
        assert got[name] == "pass", (name, report.step(name).detail, report.step(name).response)
    assert "S256 supported" in report.step("authorization server metadata").detail
    # Header clients ran on a temporary token of the user's, revoked afterwards.
    assert got["initialize"] == got["tools/list"] == "pass"
    from oauth.models import Grant

    assert committed(lambda: Grant.objects.get(server=server).revoked_at) is not None


def test_a_private_site_url_is_not_called_without_the_setting(
    doctor_settings, world, committed, monkeypatch
):
    from integrations.doctor import probe
    from servers.outbound.addresses import parse_ip_literal

    async def lan(host, port):
        return [parse_ip_literal("192.168.1.20")]

    monkeypatch.setattr(probe, "resolve", lan)
    doctor_settings.SITE_URL = "http://getmcp.lan:8000"
    doctor_settings.DOCTOR_ALLOW_PRIVATE_SITE = False
    user, server = world()
    report = run(committed, server, user=user)
    step = report.step("public address")
    assert step.status == "fail"
    assert step.detail.startswith("getmcp.lan resolves to 192.168.1.20, a private address")
    assert "DOCTOR_ALLOW_PRIVATE_SITE" in step.detail
    assert report.step("initialize") is None


def test_a_default_local_install_passes_without_any_setting(doctor_settings, world, committed):
    doctor_settings.DOCTOR_ALLOW_PRIVATE_SITE = False  # the default
    user, server = world()
    report = run(committed, server, user=user)
    assert report.healthy, [
        (s.name, s.status, s.detail) for s in report.steps if s.status == "fail"
    ]
    assert report.counts["pass"] >= 6
    assert report.step("initialize").status == report.step("tools/list").status == "pass"


def test_nothing_answering_at_site_url_is_named_with_how_to_point_the_doctor_elsewhere(
    doctor_settings, world, committed
):
    from tests.conftest import free_port

    doctor_settings.SITE_URL = f"http://127.0.0.1:{free_port()}"
    user, server = world()
    report = run(committed, server, user=user)
    step = report.step("site answers")
    assert step.status == "fail"
    assert step.detail.startswith(f"Nothing answers at {doctor_settings.SITE_URL} (SITE_URL)")
    assert "--site-url" in step.fix and "make doctor PORT=9000" in step.fix
    assert report.step("initialize") is None and report.counts["fail"] == 1


def test_the_command_checks_the_site_given_with_site_url(
    doctor_settings, doctor_live, world, committed, capsys
):
    from tests.conftest import free_port

    doctor_settings.SITE_URL = f"http://127.0.0.1:{free_port()}"  # not where the site runs
    user, server = world()
    committed(lambda: call_command("server", "doctor", server.slug, "--site-url", doctor_live.url))
    out = capsys.readouterr().out
    assert f"Connector doctor for {doctor_live.url}/mcp/{server.slug}" in out
    assert "PASS  site answers" in out and "PASS  initialize" in out
    assert " 0 failed" in out


def test_the_command_prints_the_report_and_fails_when_a_check_fails(
    doctor_settings, world, committed, capsys
):
    user, server = world()
    committed(lambda: call_command("server", "doctor", server.slug))
    out = capsys.readouterr().out
    assert "PASS  initialize" in out and "PASS  SSE streaming" in out
    with pytest.raises(CommandError, match="failed"):
        committed(lambda: call_command("server", "doctor", server.slug, "--key", "gmcp_nope_1"))
    assert "FAIL  initialize" in capsys.readouterr().out
