"""The per-server HTTP surfaces beside MCP (seeds 000, 003, 004): server info, a REST call per
tool, the generated OpenAPI document, the discovery document and the Webtools API. Each handler
parses, calls a function of gateway.surfaces, and renders."""

from dataclasses import dataclass
from typing import Any

import orjson

from gateway.endpoint.http import Send
from mcp_protocol.jsonrpc import dumps
from mcp_protocol.limits import MAX_JSON_DEPTH, depth_exceeds

from ..pipeline import named_call
from ..surfaces import discovery, info, openapi, webtools
from .gate import Gate
from .http import BodyTooLarge, HttpRequest, respond, respond_json


def mount(gate: Gate) -> str:
    return f"/mcp/{gate.slug}" + (f"@{gate.version}" if gate.version else "")


def base_url(gate: Gate) -> str:
    scope = gate.request.scope
    return (
        f"{scope.get('scheme', 'http')}://{gate.request.header('host', 'localhost')}{mount(gate)}"
    )


# A body's 400 or 413: the status and the JSON payload it is answered with.
Problem = tuple[int, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Posted:
    """A Webtools POST's body, read before admission: the version it pins is the snapshot that
    is admitted (once). A body that cannot be read is answered only once the request is
    admitted, so a caller who may not call learns nothing of its body first."""

    body: Any
    problem: Problem | None

    @property
    def pinned(self) -> str | None:
        return webtools.requested_version(self.body)


async def parse_json(request: HttpRequest) -> tuple[Any, Problem | None]:
    """The request body as JSON (an empty body is an empty object), or the 400/413 it gets."""
    from django.conf import settings

    try:
        body = await request.read_body(settings.MCP_MAX_BODY_BYTES)
    except BodyTooLarge:
        return None, (413, {"error": "Request body too large"})
    if not body.strip():
        return {}, None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return None, (400, {"error": f"Invalid JSON: {exc}"})
    if depth_exceeds(data):
        return None, (400, {"error": f"JSON nested deeper than {MAX_JSON_DEPTH} levels"})
    return data, None


async def webtools_posted(request: HttpRequest) -> Posted:
    data, problem = await parse_json(request)
    return Posted(data, problem)


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
    assert gate.admitted is not None  # app.rest_tool admitted it
    body, problem = await parse_json(gate.request)
    if problem is not None:
        status, payload = problem
    else:
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


async def webtools_call(gate: Gate, send: Send, posted: Posted) -> None:
    """A Webtools POST admitted by the entrance (app.py) for the version its body pins."""
    assert gate.admitted is not None  # admitted by the entrance
    body = posted.body
    if posted.problem is not None:
        status, payload = posted.problem
    else:
        action = body.get("action") if isinstance(body, dict) else None
        arguments = body.get("request") if isinstance(body, dict) else None
        named = named_call.NamedCall(
            call=gate.call("webtools"), tool=action, arguments=arguments, body=body
        )
        status, payload = await named_call.webtools_call(gate.redis, gate.admitted, named)
    await respond_json(send, status, payload, gate.cors_headers())
