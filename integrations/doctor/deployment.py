"""The deployment around the server: https, whether the internet can reach it, CORS for
browser-based clients, and whether a proxy holds server-sent events back until a stream ends."""

from urllib.parse import urlsplit

from mcp_protocol import versions

from .header_clients import CLIENT_INFO, headers
from .probe import Exchange, Probe, SiteAddress
from .report import FAIL, PASS, SKIP, WARN, Report, Step

FAMILY = "Deployment"
# The MCP Inspector's default address: the browser-based client people try first.
DEFAULT_ORIGIN = "http://localhost:6274"
FIRST_EVENT_WARN_MS = 1000


def _step(name, status, detail, fix: str = "", exchange: Exchange | None = None) -> Step:
    return Step(
        FAMILY,
        name,
        status,
        detail,
        fix,
        request=exchange.request if exchange else "",
        response=exchange.response if exchange else "",
        elapsed_ms=exchange.elapsed_ms if exchange else None,
    )


def check_https(report: Report, url: str, site: SiteAddress) -> None:
    if urlsplit(url).scheme == "https":
        report.add(_step("https", PASS, "Served over https"))
    elif site.local:
        report.add(
            _step(
                "https",
                SKIP,
                "Not checked on a local install (SITE_URL is on loopback): clients on this "
                "machine connect over plain http",
                "Before connecting claude.ai or ChatGPT, serve getmcp behind https at a public "
                "address (README: TLS in front) and set SITE_URL to it.",
            )
        )
    elif site.non_public:
        report.add(
            _step(
                "https",
                WARN,
                "Plain http: fine on this machine or network, not for hosted clients",
                "Serve getmcp behind https and set SITE_URL to the https address before "
                "connecting claude.ai or ChatGPT.",
            )
        )
    else:
        report.add(
            _step(
                "https",
                FAIL,
                "Plain http on a public address: claude.ai and ChatGPT require https",
                "Terminate TLS in front of getmcp and set SITE_URL to the https address.",
            )
        )


def check_reachability(report: Report, site: SiteAddress, *, allow_private: bool) -> bool:
    """Whether the other steps can run (the guard admits the site's address): a public site,
    a local one (loopback: this machine's own site), or a private one DOCTOR_ALLOW_PRIVATE_SITE
    admits."""
    if site.error:
        report.add(
            _step("public address", FAIL, site.error, "Set SITE_URL to a name that resolves.")
        )
        return False
    if site.non_public is None:
        report.add(_step("public address", PASS, site.described()))
        return True
    fix = (
        "Give getmcp a public address (a public host, or a tunnel) and set SITE_URL to it; "
        "SITE_URL is the address the doctor and the OAuth documents use."
    )
    if site.local:
        report.add(
            _step(
                "public address",
                SKIP,
                f"Not checked on a local install: {site.described()}. Clients on this machine "
                "(Claude Code, Cursor, VS Code, Claude Desktop) can connect and the checks below "
                "are what they see; claude.ai and ChatGPT connect from the internet and cannot",
                fix,
            )
        )
        return True
    hint = (
        f"{site.described()}: clients on this network can connect, but claude.ai and ChatGPT "
        "connect from the internet and cannot reach it"
    )
    if allow_private:
        report.add(_step("public address", WARN, hint, fix))
        return True
    report.add(
        _step(
            "public address",
            FAIL,
            hint + ". The doctor does not call private-network addresses unless "
            "DOCTOR_ALLOW_PRIVATE_SITE is set.",
            fix,
        )
    )
    return False


async def check_answers(report: Report, probe: Probe, site_url: str) -> bool:
    """Whether anything answers at SITE_URL: a doctor run against the wrong port (a site
    started with `make run PORT=9000`, SITE_URL left at its default) must say so at once,
    not as a failure of every client's first request."""
    exchange = await probe.send("GET", f"{site_url.rstrip('/')}/healthz")
    if exchange.status is not None:
        report.add(
            _step("site answers", PASS, f"{site_url} answers ({exchange.status})", "", exchange)
        )
        return True
    report.add(
        _step(
            "site answers",
            FAIL,
            f"Nothing answers at {site_url} (SITE_URL): {exchange.error}",
            "Start getmcp there, or point the doctor at where it runs: SITE_URL is read from "
            "the environment (default http://127.0.0.1:8000), so after `make run PORT=9000` "
            "run `make doctor PORT=9000`, or `manage.py server doctor SLUG --site-url "
            "http://127.0.0.1:9000`.",
            exchange,
        )
    )
    return False


async def check_cors(report: Report, probe: Probe, url: str, origin: str | None) -> None:
    asked = origin or DEFAULT_ORIGIN
    exchange = await probe.send(
        "OPTIONS",
        url,
        headers={
            "origin": asked,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type, mcp-protocol-version",
        },
    )
    allowed = exchange.header("access-control-allow-origin") in (asked, "*")
    if exchange.status is not None and exchange.status < 300 and allowed:
        report.add(_step("CORS", PASS, f"Browser clients at {asked} are allowed", "", exchange))
        return
    report.add(
        _step(
            "CORS",
            # The origin someone asked about is a failure; the Inspector's default, a hint.
            FAIL if origin else WARN,
            f"Browser clients at {asked} are refused ({exchange.status})",
            f"Add {asked} to the server's allowed origins (Settings) if a browser-based client "
            "runs there. Desktop and hosted clients send no Origin and are not affected.",
            exchange,
        )
    )


async def check_sse(report: Report, probe: Probe, url: str, credential, wait: float) -> None:
    """A long-lived stream (subscriptions/listen) must deliver its first event at once. A proxy
    that buffers responses holds it until the stream ends, so clients wait for ever."""
    exchange, to_headers, to_event = await probe.first_event(
        url,
        headers=headers(
            credential,
            **{
                "mcp-protocol-version": versions.STATELESS,
                "mcp-method": "subscriptions/listen",
            },
        ),
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {
                "notifications": {"toolsListChanged": True},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": versions.STATELESS,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                },
            },
        },
        wait=wait,
    )
    if exchange.error and to_headers is None:
        report.add(_step("SSE streaming", SKIP, exchange.error, "", exchange))
        return
    if to_headers is not None and exchange.status != 200:
        report.add(
            _step(
                "SSE streaming",
                SKIP,
                f"The stream was not opened ({exchange.status}); see the steps above",
                "",
                exchange,
            )
        )
        return
    if to_event is None:
        report.add(
            _step(
                "SSE streaming",
                FAIL,
                f"No event within {wait:g} s of opening a stream: something between the "
                "client and getmcp buffers server-sent events",
                "Turn response buffering off for /mcp/ in the proxy (nginx: "
                "proxy_buffering off; or honour the X-Accel-Buffering: no header getmcp sends; "
                "no compression of text/event-stream). Tool calls that stream and "
                "notifications otherwise arrive only when the stream ends.",
                exchange,
            )
        )
        return
    status = PASS if to_event < FIRST_EVENT_WARN_MS else WARN
    report.add(
        _step(
            "SSE streaming",
            status,
            f"First event after {to_event:.0f} ms",
            "" if status == PASS else "Slow first event: check the proxy's buffering.",
            exchange,
        )
    )
