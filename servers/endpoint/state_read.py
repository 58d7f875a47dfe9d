"""Reading, in one Redis round trip, the state a request to /mcp/<slug> needs before it runs:
the server's definition generation, the key's generation, the session (whose idle expiry it
refreshes) and whether someone has the server's live inspector open (inspector/watch.py).

A warm request does not come here: servers/endpoint/mirror.py serves it from memory and reads
the state it serves through `read_many` in the background. A request comes here when its state
is not in the mirror (first use, or not used for a while) or the mirror cannot be trusted (its
subscriber is down).

On Redis it is one Lua script, one command, which costs the client far less CPU than a pipeline;
fakeredis (embedded mode) has no Lua without an extra package, so there the same reads go
through a pipeline.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra.redis import is_embedded
from inspector.watch import flag_key

# KEYS: the servers' generation keys, then their inspector flags, then key generations, then
# sessions. ARGV: idle seconds, number of servers, number of keys.
READ_MANY = """
local ns, nk = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for i = 1, ns do
  out[#out + 1] = redis.call('GET', KEYS[i]) or false
  out[#out + 1] = redis.call('EXISTS', KEYS[ns + i])
end
for i = 2 * ns + 1, 2 * ns + nk do
  out[#out + 1] = redis.call('GET', KEYS[i]) or false
end
for i = 2 * ns + nk + 1, #KEYS do
  out[#out + 1] = redis.call('HGETALL', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[1])
end
return out
"""
_scripts: dict[Any, Any] = {}


@dataclass(slots=True)
class State:
    server_generation: str | None
    key_generation: str | None  # None when no cached key asked for it; "0" when never bumped
    # None when no session was asked for; {} when it does not exist.
    session: dict[bytes, bytes] | None
    watched: bool = False  # someone has this server's live inspector open


@dataclass(slots=True)
class Read:
    """What `read_many` found: slug -> (generation, watched), digest -> generation ("0" when
    never bumped), session id -> its hash ({} when it does not exist)."""

    servers: dict[str, tuple[str | None, bool]]
    keys: dict[str, str]
    sessions: dict[str, dict[Any, Any]]


def _decode(value: bytes | None) -> str | None:
    return value.decode() if value else None


async def read_many(
    redis: Redis, slugs: list[str], digests: list[str], session_ids: list[str]
) -> Read:
    idle = settings.MCP_SESSION_IDLE_SECONDS
    if is_embedded():
        pipe = redis.pipeline(transaction=False)
        for slug in slugs:
            pipe.get(rkeys.server_generation(slug))
            pipe.exists(flag_key(slug))
        for digest in digests:
            pipe.get(rkeys.key_generation(digest))
        for sid in session_ids:
            pipe.hgetall(rkeys.session(sid))
            pipe.expire(rkeys.session(sid), idle)
        replies = await pipe.execute()
        # Drop the EXPIRE replies so the layout matches the script's.
        head = 2 * len(slugs) + len(digests)
        replies = replies[:head] + replies[head::2]
    else:
        script = _scripts.get(id(redis))
        if script is None:
            script = _scripts[id(redis)] = redis.register_script(READ_MANY)
        keys = [rkeys.server_generation(slug) for slug in slugs]
        keys += [flag_key(slug) for slug in slugs]
        keys += [rkeys.key_generation(digest) for digest in digests]
        keys += [rkeys.session(sid) for sid in session_ids]
        replies = await script(keys=keys, args=[idle, len(slugs), len(digests)])
    servers = {
        slug: (_decode(replies[2 * i]), bool(replies[2 * i + 1])) for i, slug in enumerate(slugs)
    }
    at = 2 * len(slugs)
    keys_found = {digest: _decode(replies[at + i]) or "0" for i, digest in enumerate(digests)}
    at += len(digests)
    sessions: dict[str, dict[Any, Any]] = {}
    for i, sid in enumerate(session_ids):
        flat = replies[at + i]
        sessions[sid] = (
            flat if isinstance(flat, dict) else dict(zip(flat[::2], flat[1::2], strict=True))
        )
    return Read(servers, keys_found, sessions)


async def read_state(redis: Redis, slug: str, digest: str | None, session_id: str | None) -> State:
    found = await read_many(
        redis, [slug], [digest] if digest else [], [session_id] if session_id else []
    )
    generation, watched = found.servers[slug]
    return State(
        server_generation=generation,
        key_generation=found.keys[digest] if digest else None,
        session=found.sessions[session_id] if session_id else None,
        watched=watched,
    )
