"""Whether an upstream MCP server answered lately: last success, last failure, and why.

Kept in Redis, one hash per (server, upstream URL), written by every call and refresh, so any
process (and the dashboard) sees the same state without SQL.
"""

import hashlib
import time

from infra import keys
from infra.redis import async_client, sync_client

HEALTH_TTL = 30 * 24 * 3600


def health_key(server_id: int | None, url: str) -> str:
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    return keys.upstream_health(server_id, digest)


def _fields(url: str, ok: bool, error: str | None) -> dict:
    now = str(time.time())
    if ok:
        return {"url": url, "status": "ok", "lastOkAt": now}
    return {"url": url, "status": "unreachable", "lastErrorAt": now, "lastError": error or ""}


async def arecord(server_id: int | None, url: str, ok: bool, error: str | None = None) -> None:
    key = health_key(server_id, url)
    pipe = async_client().pipeline(transaction=False)
    pipe.hset(key, mapping=_fields(url, ok, error))
    pipe.expire(key, HEALTH_TTL)
    await pipe.execute()


def record(server_id: int | None, url: str, ok: bool, error: str | None = None) -> None:
    key = health_key(server_id, url)
    pipe = sync_client().pipeline(transaction=False)
    pipe.hset(key, mapping=_fields(url, ok, error))
    pipe.expire(key, HEALTH_TTL)
    pipe.execute()


def _decode(raw: dict) -> dict:
    data = {k.decode(): v.decode() for k, v in raw.items()}
    for field in ("lastOkAt", "lastErrorAt"):
        if field in data:
            data[field] = float(data[field])
    return data


def health(server_id: int | None, url: str) -> dict:
    """{status: ok|unreachable|unknown, lastOkAt?, lastErrorAt?, lastError?, url}."""
    raw = sync_client().hgetall(health_key(server_id, url))
    return _decode(raw) if raw else {"url": url, "status": "unknown"}


async def ahealth(server_id: int | None, url: str) -> dict:
    raw = await async_client().hgetall(health_key(server_id, url))
    return _decode(raw) if raw else {"url": url, "status": "unknown"}


def is_healthy(server_id: int | None, url: str) -> bool:
    return health(server_id, url)["status"] != "unreachable"
