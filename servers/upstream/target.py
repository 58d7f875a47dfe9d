"""Reaching the upstream that a server's rows name: its connection with the headers rendered
(secrets from the vault), its tool list, and the config fields every upstream row shares.

Adding rows (adding.py) and refreshing them (sync.py) both start here.
"""

import asyncio
from typing import Any

import orjson
from asgiref.sync import async_to_sync

from vault.wording import missing_secrets

from ..models import Server
from . import health
from .config import SECRET_REFERENCE, validate_connection
from .connection import Upstream, UpstreamUnreachable, connect, describe, list_tools

DEFAULT_TRANSPORT = "streamable-http"
# What a tool row remembers of the upstream's own description (config.synced).
SYNCED_FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations", "icons")


class UpstreamError(ValueError):
    """A request to add upstream tools that cannot be done; the message names the field."""


def _render_headers(
    server: Server | None, headers: dict
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    from ..templating import compile_value, render_text

    text = " ".join(str(v) for v in headers.values())
    names = {a or b for a, b in SECRET_REFERENCE.findall(text)}
    values: dict = {}
    if names and server is not None:
        from vault.resolve import secrets_for

        values = dict(secrets_for(server.organization_id, server.pk))
    missing = sorted(names - set(values))
    if missing:
        raise UpstreamError(f"headers: {missing_secrets(missing)}")
    rendered = compile_value(headers)({"secrets": values})
    pairs = tuple((str(k), render_text(v)) for k, v in rendered.items() if v not in (None, ""))
    return pairs, tuple(values[n] for n in names)


def upstream_of(
    server: Server | None,
    url: str,
    transport: str = DEFAULT_TRANSPORT,
    headers=None,
    timeout: float = 30.0,
) -> Upstream:
    pairs, secrets = _render_headers(server, headers or {})
    return Upstream(
        url=url,
        transport=transport,
        headers=pairs,
        organization_id=server.organization_id if server else None,
        server_id=server.pk if server else None,
        timeout=timeout,
        secret_values=secrets,
    )


async def afetch_tools(upstream: Upstream) -> list[dict]:
    """The upstream's tools; records its health either way. UpstreamUnreachable if it is down."""
    try:
        async with asyncio.timeout(upstream.timeout):
            async with connect(upstream) as client:
                tools = await list_tools(client)
    except UpstreamUnreachable as exc:
        await health.arecord(upstream.server_id, upstream.url, ok=False, error=exc.reason)
        raise
    except Exception as exc:
        reason = describe(exc, upstream)
        await health.arecord(upstream.server_id, upstream.url, ok=False, error=reason)
        raise UpstreamUnreachable(reason) from None
    await health.arecord(upstream.server_id, upstream.url, ok=True)
    return tools


def fetch_tools(upstream: Upstream) -> list[dict]:
    return async_to_sync(afetch_tools)(upstream)


def check_target(url, transport, headers) -> None:
    errors = validate_connection({"url": url, "transport": transport, "headers": headers or {}})
    if errors:
        raise UpstreamError("; ".join(e.removeprefix("config.") for e in errors))


def synced_fields(tool: dict) -> dict:
    """What the upstream says of a tool that a refresh compares against (config.synced)."""
    return {key: tool[key] for key in SYNCED_FIELDS if key in tool}


def connection_config(url: str, transport: str, headers) -> dict:
    """The connection fields of an upstream row's config."""
    config: dict[str, Any] = {"url": url, "transport": transport}
    if headers:
        config["headers"] = dict(headers)
    return config


def group_key(config: dict) -> tuple:
    """Rows with the same key share one upstream (one connection, one tool list)."""
    return (
        config.get("url"),
        config.get("transport", DEFAULT_TRANSPORT),
        orjson.dumps(config.get("headers") or {}, option=orjson.OPT_SORT_KEYS),
    )
