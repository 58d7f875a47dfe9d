"""Session-era state in Redis: one hash per session, bound to the server and credential that made it."""

import secrets
from dataclasses import dataclass
from typing import Any, cast

import orjson
from django.conf import settings
from redis.asyncio import Redis
from redis.typing import EncodableT

from infra import keys as rkeys
from servers import state_events


@dataclass(slots=True, frozen=True)
class Session:
    sid: str
    server_id: int
    credential: str
    protocol_version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None

    @classmethod
    def from_hash(cls, sid: str, data: dict[bytes, bytes]) -> "Session | None":
        if not data:
            return None
        # A warm call hands the same hash (the state mirror's, until a re-read replaces it) for
        # every request of a session: its Session, immutable, is parsed once per hash.
        parsed = _parsed.get(sid)
        if parsed is not None and parsed[0] is data:
            return parsed[1]
        session = cls._parse(sid, data)
        if len(_parsed) >= MAX_PARSED:
            _parsed.clear()
        _parsed[sid] = (data, session)
        return session

    @classmethod
    def _parse(cls, sid: str, data: dict[bytes, bytes]) -> "Session":
        level = data.get(b"lvl")
        info = data.get(b"ci")
        return cls(
            sid=sid,
            server_id=int(data[b"srv"]),
            credential=data[b"cred"].decode(),
            protocol_version=data[b"v"].decode(),
            capabilities=orjson.loads(data.get(b"caps", b"{}")),
            client_info=orjson.loads(info) if info else None,
            log_level=level.decode() if level else None,
        )


# sid -> (the hash parsed, its Session): holding the hash keeps its identity unique. Bounded
# like the state mirror's session entries; cleared whole when full (refilled by the next calls).
_parsed: dict[str, tuple[dict[bytes, bytes], Session]] = {}
MAX_PARSED = 20_000


def new_session_id() -> str:
    # 128 bits from the OS CSPRNG, hex so it is visible ASCII as the spec requires.
    return secrets.token_hex(16)


async def create(
    redis: Redis,
    *,
    server_id: int,
    credential: str,
    protocol_version: str,
    capabilities: dict[str, Any],
    client_info: dict[str, Any] | None,
) -> Session:
    sid = new_session_id()
    mapping: dict[EncodableT, EncodableT] = {
        "srv": server_id,
        "cred": credential,
        "v": protocol_version,
        "caps": orjson.dumps(capabilities or {}),
    }
    if client_info:
        mapping["ci"] = orjson.dumps(client_info)
    pipe = redis.pipeline(transaction=False)
    pipe.hset(rkeys.session(sid), mapping=mapping)
    pipe.expire(rkeys.session(sid), settings.MCP_SESSION_IDLE_SECONDS)
    pipe.sadd(rkeys.server_sessions(server_id), sid)
    await pipe.execute()
    return Session(
        sid, server_id, credential, protocol_version, capabilities or {}, client_info, None
    )


async def set_log_level(redis: Redis, sid: str, level: str) -> None:
    await update(redis, sid, {"lvl": level})


async def update(redis: Redis, sid: str, mapping: dict[EncodableT, EncodableT]) -> None:
    """Change fields of a session; every process's mirror forgets its copy."""
    pipe = redis.pipeline(transaction=False)
    pipe.hset(rkeys.session(sid), mapping=mapping)
    state_events.publish(pipe, state_events.SESSION, sid)
    try:
        await pipe.execute()
    finally:
        state_events.forget_locally(state_events.SESSION, sid)


async def subscribe(redis: Redis, session: Session, uri: str) -> None:
    pipe = redis.pipeline(transaction=False)
    pipe.sadd(rkeys.resource_subscribers(session.server_id, uri), session.sid)
    pipe.sadd(rkeys.session_subscriptions(session.sid), uri)
    pipe.expire(rkeys.session_subscriptions(session.sid), settings.MCP_SESSION_IDLE_SECONDS)
    await pipe.execute()


async def unsubscribe(redis: Redis, session: Session, uri: str) -> None:
    pipe = redis.pipeline(transaction=False)
    pipe.srem(rkeys.resource_subscribers(session.server_id, uri), session.sid)
    pipe.srem(rkeys.session_subscriptions(session.sid), uri)
    await pipe.execute()


async def end(redis: Redis, session: Session) -> None:
    # Event streams are left to expire on their own TTL: finding them would need a keyspace scan.
    uris = await redis.smembers(rkeys.session_subscriptions(session.sid))
    pipe = redis.pipeline(transaction=False)
    for uri in uris:
        uri = cast(bytes, uri)
        pipe.srem(rkeys.resource_subscribers(session.server_id, uri.decode()), session.sid)
    pipe.srem(rkeys.server_sessions(session.server_id), session.sid)
    pipe.delete(rkeys.session(session.sid), rkeys.session_subscriptions(session.sid))
    # Every process's mirror forgets it (gateway/endpoint/mirror.py).
    state_events.publish(pipe, state_events.SESSION, session.sid)
    try:
        await pipe.execute()
    finally:
        state_events.forget_locally(state_events.SESSION, session.sid)
