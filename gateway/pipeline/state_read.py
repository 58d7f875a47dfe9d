"""Reading, in one Redis round trip, the state a request to /mcp/<slug> needs before it runs:
the server's definition generation, the key's generation, the session (whose idle expiry it
refreshes) and whether someone has the server's live inspector open (inspector/watch.py).

A warm request does not come here: gateway/pipeline/mirror.py serves it from memory and reads
the state it serves through `read_many` in the background. A request comes here when its state
is not in the mirror (first use, or not used for a while) or the mirror cannot be trusted (its
subscriber is down).

On Redis it is one Lua script, one command, which costs the client far less CPU than a pipeline;
fakeredis (embedded mode) has no Lua without an extra package, and on a Redis Cluster the keys
of one read live in many slots (servers, keys and sessions each hash where they will), so in
both the same reads go through a pipeline, which redis-py's cluster client splits by node.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra.redis import is_cluster, is_embedded
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
# The refresher's re-read of many servers and keys (gateway/pipeline/mirror.py): the slugs and
# digests travel newline-joined in ARGV with the key names' prefixes, and the values come back
# joined, so neither side packs or parses one element per key (a pass over 10,000 servers costs
# the client a few ms instead of ~23). ARGV: slugs, digests, then the prefixes of generation,
# inspector flag and key-generation keys. Returns the generations ('' when none), one '0'/'1'
# per flag, the key generations ('' when none). MGET in batches: Lua's unpack() takes at most a
# few thousand values.
READ_KEPT = """
local function mget(subjects, prefix, present)
  local out, batch = {}, {}
  local function flush()
    local found = redis.call('MGET', unpack(batch))
    for i = 1, #batch do
      if present then out[#out + 1] = found[i] and '1' or '0' else out[#out + 1] = found[i] or '' end
    end
    batch = {}
  end
  for subject in string.gmatch(subjects, '[^\\n]+') do
    batch[#batch + 1] = prefix .. subject
    if #batch == 500 then flush() end
  end
  if #batch > 0 then flush() end
  return table.concat(out, present and '' or '\\n')
end
return {mget(ARGV[1], ARGV[3], false), mget(ARGV[1], ARGV[4], true), mget(ARGV[2], ARGV[5], false)}
"""


def _prefix(name_of: Any) -> str:
    """The prefix of an infra/keys.py name made of a prefix and its subject (checked here, so a
    name that changes shape fails at import instead of reading the wrong keys)."""
    prefix: str = name_of("")
    assert name_of("subject") == prefix + "subject", name_of
    return prefix


KEPT_PREFIXES = (
    _prefix(rkeys.server_generation),
    _prefix(flag_key),
    _prefix(rkeys.key_generation),
)
_scripts: dict[Any, Any] = {}
_kept_scripts: dict[Any, Any] = {}


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


async def read_kept(
    redis: Redis, slugs: list[str], digests: list[str]
) -> tuple[list[str | None], list[bool], list[str]]:
    """The refresher's read, in one round trip: each server's generation and inspector flag, and
    each key's generation ("0" when never bumped). Slugs and digests never hold a newline.

    Three flat lists, no tuple per server: a pass over 10,000 entries that allocated one
    container each would wake the garbage collector (a full collection of a Django process
    costs more than the whole read)."""
    if is_embedded() or is_cluster():
        pipe = redis.pipeline(transaction=False)
        for slug in slugs:
            pipe.get(rkeys.server_generation(slug))
        for slug in slugs:
            pipe.get(flag_key(slug))
        for digest in digests:
            pipe.get(rkeys.key_generation(digest))
        replies = await pipe.execute()
        count = len(slugs)
        return (
            [_decode(value) for value in replies[:count]],
            [value is not None for value in replies[count : 2 * count]],
            [_decode(value) or "0" for value in replies[2 * count :]],
        )
    script = _kept_scripts.get(id(redis))
    if script is None:
        script = _kept_scripts[id(redis)] = redis.register_script(READ_KEPT)
    generations, flags, key_generations = await script(
        keys=[], args=["\n".join(slugs), "\n".join(digests), *KEPT_PREFIXES]
    )
    return (
        [value.decode() or None for value in generations.split(b"\n")] if slugs else [],
        [flag == 49 for flag in flags],  # b"1"
        [value.decode() or "0" for value in key_generations.split(b"\n")] if digests else [],
    )


async def read_many(
    redis: Redis, slugs: list[str], digests: list[str], session_ids: list[str]
) -> Read:
    idle = settings.MCP_SESSION_IDLE_SECONDS
    if is_embedded() or is_cluster():
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
