"""Sending a request through the SSRF guard: secrets and masking, the response cache, retries
with backoff, and the test-run trace."""

import asyncio
import base64
import random
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlencode

import orjson

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import ToolError
from servers.outbound import BlockedDestination, GuardedResponse, OutboundError, guarded_request
from vault.wording import missing_secrets

from .auth import apply_auth, apply_connection
from .compiling import HttpTool
from .config import IDEMPOTENT, MAX_RETRY_AFTER
from .request import Outbound, build_request, forward_client_headers

if TYPE_CHECKING:
    from vault.masking import Masker
    from vault.resolve import SecretValues

# -- running --------------------------------------------------------------------------------------


def _masker(secrets: "SecretValues", outbound: Outbound) -> "Masker":
    from vault.masking import Masker

    return Masker([*secrets.values(), *outbound.sensitive])


async def _secrets(tool: HttpTool, test: bool) -> "SecretValues":
    from vault.resolve import SecretValues, asecrets_for

    if tool.organization_id is None or not tool.secret_names:
        # A config that names no secret cannot send one, so there is nothing to read or mask.
        values = SecretValues({})
    else:
        values = await asecrets_for(tool.organization_id, tool.server_id, test=test)
    missing = sorted(tool.secret_names - set(values))
    if missing:
        raise ToolError(missing_secrets(missing))
    return values


def _retry_after(response: GuardedResponse) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def _should_retry(tool: HttpTool, status: int | None) -> bool:
    if status == 429:
        return True
    idempotent = tool.method in IDEMPOTENT
    return idempotent and (status is None or status >= 500)


def _backoff(tool: HttpTool, attempt: int) -> float:
    # Exponential with jitter, so many callers that failed together do not return together.
    return float(tool.backoff * (2**attempt) * (0.5 + random.random() / 2))


class _Trace:
    """What a test run shows; a no-op unless the context asks for it (ctx.http_trace)."""

    def __init__(self, ctx: RequestContext) -> None:
        self.records = ctx.http_trace

    def add(self, record: dict[str, Any]) -> None:
        if self.records is not None:
            self.records.append(record)


def _request_dump(
    outbound: Outbound, response: GuardedResponse | None, masker: "Masker"
) -> dict[str, Any]:
    url = outbound.url
    if outbound.params:
        url += ("&" if "?" in url else "?") + urlencode(outbound.params)
    headers = dict(response.request_headers) if response is not None else dict(outbound.headers)
    dump = {
        "method": outbound.method,
        "url": masker.mask(url),
        "headers": masker.mask_data(headers),
    }
    if outbound.json is not None:
        dump["json"] = masker.mask_data(outbound.json)
    if outbound.data:
        dump["form"] = masker.mask_data(outbound.data)
    if outbound.files:
        dump["multipart"] = {
            k: {"filename": v[0], "contentType": v[2], "size": len(v[1])}
            if v[0]
            else masker.mask(v[1].decode("utf-8", errors="replace"))
            for k, v in outbound.files.items()
        }
    if outbound.content is not None:
        dump["content"] = masker.mask(outbound.content.decode("utf-8", errors="replace")[:10_000])
    return dump


def _response_dump(
    response: GuardedResponse, masker: "Masker", *, limit: int = 64 * 1024
) -> dict[str, Any]:
    textual = _is_textual(response.content_type)
    body = (
        masker.mask(response.content[:limit].decode(response.encoding, errors="replace"))
        if textual
        else base64.b64encode(response.content[:limit]).decode()
    )
    return {
        "status": response.status_code,
        "reason": response.reason_phrase,
        "headers": masker.mask_data(dict(response.headers)),
        "body": body,
        "bodyEncoding": "text" if textual else "base64",
        "size": len(response.content),
        "truncated": response.truncated or len(response.content) > limit,
        "url": masker.mask(response.url),
        "redirects": [masker.mask(u) for u in response.redirects],
        "elapsedMs": round(response.elapsed_ms, 1),
    }


async def _send(tool: HttpTool, outbound: Outbound) -> GuardedResponse:
    return await guarded_request(
        outbound.method,
        outbound.url,
        organization_id=tool.organization_id,
        headers=outbound.headers,
        params=outbound.params or None,
        json=outbound.json,
        data=outbound.data,
        files=outbound.files or None,
        content=outbound.content,
        timeout=tool.timeout,
        max_bytes=tool.max_bytes,
        follow_redirects=tool.follow_redirects,
    )


def _to_cache(response: GuardedResponse, masker: "Masker") -> bytes:
    # Nothing of the request is kept (its headers carry credentials); the URL is masked.
    return orjson.dumps(
        {
            "s": response.status_code,
            "r": response.reason_phrase,
            "h": list(response.headers.multi_items()),
            "b": base64.b64encode(response.content).decode(),
            "t": response.truncated,
            "u": masker.mask(response.url),
            "m": response.request_method,
        }
    )


def _from_cache(raw: bytes) -> GuardedResponse:
    import httpx2

    data = orjson.loads(raw)
    return GuardedResponse(
        status_code=data["s"],
        reason_phrase=data["r"],
        headers=httpx2.Headers(data["h"]),
        content=base64.b64decode(data["b"]),
        truncated=data["t"],
        url=data["u"],
        elapsed_ms=0.0,
        request_method=data["m"],
        request_headers=httpx2.Headers(),
    )


async def fetch(
    tool: HttpTool, arguments: dict[str, Any], variables: dict[str, Any], ctx: RequestContext
) -> tuple[GuardedResponse, "Masker"]:
    """Send the tool's request (auth, forwarding, cache, retries); returns (response, masker)."""
    test = ctx.use_test_secrets
    secrets = await _secrets(tool, test)
    variables = {**variables, "secrets": secrets}
    outbound = build_request(tool, arguments, variables)
    forward_client_headers(tool, outbound, ctx)
    await apply_auth(tool, outbound, variables, test=test)
    if tool.connection is not None:
        outbound.connection_token = await apply_connection(tool, outbound, ctx)
    masker = _masker(secrets, outbound)
    trace = _Trace(ctx)

    cache_key = None
    # A response fetched with a person's own token is theirs: never cached for anyone.
    if tool.cache_ttl and tool.method in ("GET", "HEAD") and not test and tool.connection is None:
        from infra.redis import async_client

        cache_key = outbound.cache_key(tool)
        cached = await async_client().get(cache_key)
        if cached:
            response = _from_cache(cast(bytes, cached))
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "cache": "hit",
                    "response": _response_dump(response, masker),
                }
            )
            return response, masker

    semaphore = tool.semaphore()
    try:
        await asyncio.wait_for(semaphore.acquire(), timeout=tool.timeout)
    except TimeoutError:
        raise ToolError(
            f"Too many calls of {tool.name} are running at once (at most {tool.max_concurrency});"
            " try again shortly."
        ) from None
    try:
        response, masker = await _send_with_retries(
            tool, outbound, variables, masker, trace, ctx, test
        )
    finally:
        semaphore.release()
    if cache_key and 200 <= response.status_code < 300:
        from infra.redis import async_client

        await async_client().set(cache_key, _to_cache(response, masker), ex=tool.cache_ttl)
    return response, masker


async def _send_with_retries(
    tool: HttpTool,
    outbound: Outbound,
    variables: dict[str, Any],
    masker: "Masker",
    trace: _Trace,
    ctx: RequestContext,
    test: bool,
) -> tuple[GuardedResponse, "Masker"]:
    attempt = 0
    refreshed = False
    while True:
        started = time.perf_counter()
        try:
            response = await _send(tool, outbound)
        except BlockedDestination as exc:
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "attempt": attempt + 1,
                    "error": masker.mask(exc.message),
                }
            )
            raise ToolError(masker.mask(exc.message)) from None
        except OutboundError as exc:
            trace.add(
                {
                    "request": _request_dump(outbound, None, masker),
                    "attempt": attempt + 1,
                    "error": masker.mask(exc.message),
                    "elapsedMs": round((time.perf_counter() - started) * 1000, 1),
                }
            )
            if attempt < tool.retries and _should_retry(tool, None):
                await _pause(ctx, _backoff(tool, attempt))
                attempt += 1
                continue
            raise ToolError(
                f"The upstream API could not be reached: {masker.mask(exc.message)}"
            ) from None
        trace.add(
            {
                "request": _request_dump(outbound, response, masker),
                "attempt": attempt + 1,
                "cache": "miss" if tool.cache_ttl else "off",
                "connectedTo": [address for _host, address in response.connected_to],
                "response": _response_dump(response, masker),
            }
        )
        status = response.status_code
        if status == 401 and tool.connection is not None and not refreshed:
            # The person's token may have been revoked upstream before it expired: a refresh
            # tells (a refused one sends the person to consent again, need.py).
            refreshed = True
            outbound.connection_token = await apply_connection(
                tool, outbound, ctx, stale=outbound.connection_token
            )
            masker = masker.add(*outbound.sensitive)
            continue
        if status == 401 and tool.auth and tool.auth.get("type") == "oauth2" and not refreshed:
            # The cached token may have been revoked before it expired: fetch a new one once.
            refreshed = True
            await apply_auth(tool, outbound, variables, test=test, refresh=True)
            masker = masker.add(*outbound.sensitive)
            continue
        if (
            attempt < tool.retries
            and (status == 429 or status >= 500)
            and _should_retry(tool, status)
        ):
            wait = _retry_after(response)
            if wait is None:
                wait = _backoff(tool, attempt)
            if wait <= MAX_RETRY_AFTER:
                await _pause(ctx, wait)
                attempt += 1
                continue
        return response, masker


async def _pause(ctx: RequestContext, seconds: float) -> None:
    await ctx.sleep(seconds)


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


def _is_textual(content_type: str) -> bool:
    return (
        not content_type
        or content_type.startswith("text/")
        or _is_json(content_type)
        or content_type.endswith("+xml")
        or content_type
        in (
            "application/xml",
            "application/javascript",
            "application/x-www-form-urlencoded",
            "application/yaml",
        )
    )
