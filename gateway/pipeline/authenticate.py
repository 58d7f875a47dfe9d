"""Stage 1, authenticate: which server the request is for, and which credential it presented.

In: the request's `Arrival`. Out: `Authenticated` (the server's snapshot as published, the
credential, the session hash the mirror holds under the request's session id), or `Denied`
(refused.py writes its answer). The checks run in one order that is part of the contract (which
refusal a request gets when several apply): Host, the server (unknown, draft, broken
definition), Origin, the credential, paused. One pass, each check once: no Redis round trip on
a warm path (mirror.py), and no SQL (credentials.py)."""

from dataclasses import dataclass

from redis.asyncio import Redis

from servers.snapshot import DefinitionError, Snapshot, get_snapshot

from . import credentials, usage
from .arrival import Arrival
from .credentials import Credential, Presented, Rejected
from .hosts import host_allowed, origin_allowed
from .mirror import mirror
from .refused import Denied


@dataclass(frozen=True, slots=True)
class Authenticated:
    # None only for a preflight to a slug with no live server (answered like any).
    snapshot: Snapshot | None
    credential: Credential
    session_data: dict[bytes, bytes] | None
    watched: bool  # someone has this server's live inspector open


async def authenticate(
    redis: Redis, arrival: Arrival, *, preflight: bool
) -> Authenticated | Denied:
    if not host_allowed(arrival.host):
        return Denied("host_refused")
    presented = Presented.of(arrival.authorization)
    key_digest = (
        credentials.generation_digest(presented.digest)
        if presented.digest and presented.cached is not None
        else None
    )
    sid = arrival.session_id if not preflight else None
    states = mirror()
    state = states.lookup(arrival.slug, key_digest, sid)
    if state is None:
        state = await states.read(redis, arrival.slug, key_digest, sid)
    watched = state.watched

    published: Snapshot | None = None
    broken = False
    try:
        published = await get_snapshot(arrival.slug, state.server_generation, arrival.version)
    except DefinitionError:
        # A stored definition that no longer compiles: the owner has to fix it. Only a caller
        # with a valid key learns it (its organization is unknown without the definition).
        broken = True
    live = published if published is not None and published.status != "draft" else None

    # The Origin check comes after the server is known: its refusal is the server's to see. A
    # slug with no live server behind it (unknown, draft, or broken) gets the same answers as a
    # protected server without extra origins, so an outsider cannot tell them apart.
    allowed_origins = live.allowed_origins if live is not None else ()
    if arrival.origin and not origin_allowed(arrival.origin, arrival.host, allowed_origins):
        return Denied("origin_refused", live, watched=watched)
    if preflight:
        return Authenticated(live, credentials.ANONYMOUS, None, watched)

    if live is None:
        # Only the caller's valid credential learns what is wrong: its own organization that
        # the server is a draft (or broken); everyone else, that no such server exists.
        found = await credentials.check(redis, presented, state.key_generation, None)
        if isinstance(found, Rejected):
            return Denied(found.why, None, True, watched, found.detail)
        if broken:
            return Denied("broken_definition", None, True, watched)
        if published is not None and credentials.owns_draft(found, published):
            return Denied("draft", None, True, watched)
        return Denied("unknown_server", None, True, watched)

    credential = credentials.ANONYMOUS
    if live.auth_mode != "none":
        # Before the status: an outsider must not learn that a server is paused.
        found = await credentials.check(redis, presented, state.key_generation, live)
        if isinstance(found, Rejected):
            return Denied(found.why, live, True, watched, found.detail)
        credential = found
        usage.used(credential)
    if live.status == "paused":
        return Denied("paused", live, True, watched)
    return Authenticated(live, credential, state.session, watched)
