"""The per-server HTTP surfaces beside MCP (seeds 000, 003, 004): server info, a REST call per
tool, the generated OpenAPI document, the discovery document and the Webtools API. Each handler
parses, calls a function of gateway.surfaces, and renders."""

from typing import Any

import orjson

from gateway.endpoint.http import Send
from mcp_protocol.jsonrpc import dumps
from mcp_protocol.limits import MAX_JSON_DEPTH, depth_exceeds
from servers.snapshot import Snapshot

from ..pipeline import named_call
from ..surfaces import discovery, info, openapi, webtools
from .gate import Gate, Refused
from .http import BodyTooLarge, respond, respond_json


def mount(gate: Gate) -> str:
    return f"/mcp/{gate.slug}" + (f"@{gate.version}" if gate.version else "")


def base_url(gate: Gate) -> str:
    scope = gate.request.scope
    return (
        f"{scope.get('scheme', 'http')}://{gate.request.header('host', 'localhost')}{mount(gate)}"
    )


async def read_json(gate: Gate, send: Send) -> tuple[Any, bool]:
    """The request body as JSON, or None after answering 400/413 itself."""
    from django.conf import settings

    try:
        body = await gate.request.read_body(settings.MCP_MAX_BODY_BYTES)
    except BodyTooLarge:
        await respond_json(send, 413, {"error": "Request body too large"}, gate.cors_headers())
        return None, False
    if not body.strip():
        return {}, True
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        await respond_json(send, 400, {"error": f"Invalid JSON: {exc}"}, gate.cors_headers())
        return None, False
    if depth_exceeds(data):
        message = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        await respond_json(send, 400, {"error": message}, gate.cors_headers())
        return None, False
    return data, True


async def server_info(gate: Gate, send: Send) -> None:
    if info.wants_html(gate.request.header("accept")):
        page = info.info_page(gate.snapshot, base_url(gate)).encode()
        headers = [*info.INFO_PAGE_HEADERS, *gate.cors_headers()]
        await respond(send, 200, page, "text/html; charset=utf-8", headers)
        return
    await respond_json(
        send, 200, info.server_info(gate.snapshot, base_url(gate)), gate.cors_headers()
    )


async def call_tool(gate: Gate, send: Send, name: str) -> None:
    body, ok = await read_json(gate, send)
    if not ok:
        return
    assert gate.admitted is not None  # app.rest_tool admitted it
    named = named_call.NamedCall(call=gate.call("rest"), tool=name, arguments=body, body=body)
    status, payload = await named_call.rest_call(gate.redis, gate.admitted, named)
    await respond_json(send, status, payload, gate.cors_headers())


async def openapi_document(gate: Gate, send: Send) -> None:
    await respond_json(
        send, 200, openapi.openapi_document(gate.snapshot, base_url(gate)), gate.cors_headers()
    )


async def discovery_document(gate: Gate, send: Send) -> None:
    document = discovery.discovery_document(gate.snapshot, mount(gate))
    await respond_json(send, 200, document, gate.cors_headers())


async def webtools_metadata(gate: Gate, send: Send) -> None:
    await respond(
        send, 200, dumps(webtools.metadata(gate.snapshot)), "application/json", gate.cors_headers()
    )


async def webtools_call(gate: Gate, send: Send, body: Any) -> None:
    """A Webtools POST whose body was read (and whose pinned version, if any, admitted) by the
    entrance (app.py)."""
    assert gate.admitted is not None  # admitted by the entrance
    action = body.get("action") if isinstance(body, dict) else None
    arguments = body.get("request") if isinstance(body, dict) else None
    named = named_call.NamedCall(
        call=gate.call("webtools"), tool=action, arguments=arguments, body=body
    )
    status, payload = await named_call.webtools_call(gate.redis, gate.admitted, named)
    await respond_json(send, status, payload, gate.cors_headers())


async def webtools_body(gate: Gate, send: Send) -> tuple[Any, bool]:
    """A Webtools POST's body, with the request admitted again for the version it pins, if that
    is not the one served; (None, False) after answering 400/413/404 itself."""
    body, ok = await read_json(gate, send)
    if not ok:
        return None, False
    pinned = webtools.requested_version(body)
    assert gate.snapshot is not None  # admitted
    if pinned and pinned != gate.snapshot.server_info["version"]:
        # The body asks for another published version: serve that one, or say it is not there.
        gate.version = pinned
        gate.snapshot = await get_pinned(gate)
        if gate.snapshot is None:
            status, payload = webtools.not_found(gate.slug, pinned)
            await respond_json(send, status, payload, gate.cors_headers())
            return None, False
    return body, True


async def get_pinned(gate: Gate) -> Snapshot | None:
    try:
        await gate.admit()
    except Refused as refused:
        if refused.status == 404:
            return None
        raise
    return gate.snapshot
