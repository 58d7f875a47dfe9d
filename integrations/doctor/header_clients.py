"""Cursor, VS Code and Claude Code: clients that send a credential in a header. Before their
first call they initialize (offering the revision they speak), send notifications/initialized,
list the tools and may ping; clients of the 2026-07-28 revision send each request on its own."""

import orjson

from mcp_protocol import versions

from .probe import Exchange, Probe
from .report import FAIL, PASS, SKIP, WARN, Report, Step

FAMILY = "Cursor, VS Code, Claude Code"
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "getmcp-doctor", "version": "1"}


def headers(credential: str | None, **extra) -> dict:
    sent = {"content-type": "application/json", "accept": ACCEPT}
    if credential:
        sent["authorization"] = f"Bearer {credential}"
    sent.update(extra)
    return sent


def message_of(exchange: Exchange) -> dict | None:
    """The JSON-RPC message of a JSON or an SSE answer (the first `data:` line that parses)."""
    if exchange.header("content-type").startswith("text/event-stream"):
        for line in exchange.body.decode("utf-8", errors="replace").splitlines():
            if line.startswith("data:"):
                try:
                    return orjson.loads(line[5:].strip())
                except orjson.JSONDecodeError:
                    continue
        return None
    found = exchange.json()
    return found if isinstance(found, dict) else None


def refusal_fix(exchange: Exchange, *, key_given: bool) -> tuple[str, str]:
    """(what went wrong, the fix) for an answer that is not a success."""
    if exchange.error:
        return exchange.error, "Check that SITE_URL is this site's public address and it is up."
    message = message_of(exchange) or {}
    said = (message.get("error") or {}).get("message", "") if isinstance(message, dict) else ""
    status = exchange.status
    # A key-shaped credential that is not a usable key is refused 403 (gate.bad_api_key).
    if status == 401 or (status == 403 and "API key" in said):
        if key_given:
            return (
                f"{status}: the key was refused ({said or 'invalid credential'})",
                "The key is wrong, revoked, expired, of another organization or limited to "
                "other servers. Create a key for this server on its Connect page and paste it "
                "into the client's Authorization header as 'Bearer <key>'.",
            )
        return f"401: {said}", "The client must send 'Authorization: Bearer <key>'."
    if status == 403 and "Origin" in said:
        return (
            "403: Origin not allowed",
            "The client sent an Origin this server does not accept. Add it to the server's "
            "allowed origins (Settings), or configure the client not to send one.",
        )
    if status == 503 and "paused" in said:
        return (
            "503: this server is paused",
            "Resume the server (Settings → Resume); clients get 503 until then.",
        )
    if status == 403 and "is a draft" in said:
        return "403: this server is a draft", "Activate it: set its status to Active."
    if status == 404:
        return "404: unknown MCP server", "Publish the server; drafts are not served."
    return f"{status}: {said or exchange.response[:200]}", "See the response below."


async def run(report: Report, probe: Probe, url: str, *, credential, key_given: bool) -> None:
    latest = versions.LATEST_SESSION_ERA
    init = await initialize(probe, url, credential, latest)
    message = message_of(init)
    session = init.header("mcp-session-id")
    if init.status != 200 or not message or "result" not in message:
        what, fix = refusal_fix(init, key_given=key_given)
        report.add(_step("initialize", FAIL, what, fix, init))
        for name in ("revision negotiation", "tools/list", "ping"):
            report.add(Step(FAMILY, name, SKIP, "initialize failed"))
        return
    result = message["result"]
    info = result.get("serverInfo", {})
    report.add(
        _step(
            "initialize",
            PASS,
            f"{info.get('name', '?')} {info.get('version', '')} answered revision "
            f"{result.get('protocolVersion')}",
            "",
            init,
        )
    )
    await _negotiate(report, probe, url, credential)
    if not session:
        report.add(Step(FAMILY, "tools/list", WARN, "No Mcp-Session-Id in the answer"))
        return
    session_headers = {"mcp-session-id": session, "mcp-protocol-version": latest}
    await probe.send(
        "POST",
        url,
        headers=headers(credential, **session_headers),
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    listed = await probe.send(
        "POST",
        url,
        headers=headers(credential, **session_headers),
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    )
    tools = ((message_of(listed) or {}).get("result") or {}).get("tools")
    if listed.status == 200 and isinstance(tools, list):
        names = ", ".join(t.get("name", "?") for t in tools[:8])
        status = PASS if tools else WARN
        fix = "" if tools else "The server has no published tools; clients will show none."
        report.add(_step("tools/list", status, f"{len(tools)} tools: {names}", fix, listed))
    else:
        what, fix = refusal_fix(listed, key_given=key_given)
        report.add(_step("tools/list", FAIL, what, fix, listed))
    pinged = await probe.send(
        "POST",
        url,
        headers=headers(credential, **session_headers),
        json={"jsonrpc": "2.0", "id": 3, "method": "ping"},
    )
    ok = pinged.status == 200 and "result" in (message_of(pinged) or {})
    report.add(
        _step(
            "ping",
            PASS if ok else FAIL,
            f"answered in {pinged.elapsed_ms} ms" if ok else f"{pinged.status}",
            "" if ok else "The session was not kept: check that every web process shares Redis.",
            pinged,
        )
    )
    await probe.send("DELETE", url, headers=headers(credential, **session_headers))


async def initialize(probe: Probe, url: str, credential, revision: str) -> Exchange:
    return await probe.send(
        "POST",
        url,
        headers=headers(credential),
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
        },
    )


async def _negotiate(report: Report, probe: Probe, url: str, credential) -> None:
    """Each revision a client may offer is answered with that revision (older clients do not
    retry with another one when the answer differs)."""
    answered: list[str] = []
    refused: list[str] = []
    last = None
    for revision in versions.SESSION_ERA:
        exchange = await initialize(probe, url, credential, revision)
        last = exchange
        got = ((message_of(exchange) or {}).get("result") or {}).get("protocolVersion")
        (answered if got == revision else refused).append(f"{revision}→{got}")
        session = exchange.header("mcp-session-id")
        if session:
            await probe.send(
                "DELETE",
                url,
                headers=headers(credential, **{"mcp-session-id": session}),
            )
    stateless = await probe.send(
        "POST",
        url,
        headers=headers(
            credential,
            **{"mcp-protocol-version": versions.STATELESS, "mcp-method": "tools/list"},
        ),
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": versions.STATELESS,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                }
            },
        },
    )
    if stateless.status == 200 and "result" in (message_of(stateless) or {}):
        answered.append(f"{versions.STATELESS} (stateless)")
    else:
        refused.append(f"{versions.STATELESS}: {stateless.status}")
        last = stateless
    status = PASS if not refused else FAIL
    detail = "answered: " + ", ".join(answered)
    if refused:
        detail += "; not answered as offered: " + ", ".join(refused)
    fix = "" if not refused else "A client offering these revisions cannot connect."
    report.add(_step("revision negotiation", status, detail, fix, last))


def _step(name, status, detail, fix, exchange: Exchange | None) -> Step:
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
