"""Stage 1, authenticate: which server the request is for, and which credential it presented.

In: the request's `Arrival`. Out: `Authenticated` (the server's snapshot as published, the
credential, the session hash the mirror holds under the request's session id), or `Refused`.
The checks run in one order that is part of the contract (which refusal a request gets when
several apply): Host, the server (unknown, draft, broken definition), Origin, the credential,
paused. No Redis round trip on a warm path (mirror.py), and no SQL (credentials.py)."""

import time
from dataclasses import dataclass

from redis.asyncio import Redis

from infra import keys as rkeys
from mcp_protocol import errors
from servers.models import accepts_api_key, accepts_oauth
from servers.snapshot import DefinitionError, Snapshot, get_snapshot

from . import credentials, drafts, usage
from .arrival import Arrival
from .credentials import Credential
from .hosts import host_allowed, origin_allowed
from .mirror import mirror
from .refused import Refused, bad_api_key, unauthorized
from .state_read import State


@dataclass(frozen=True, slots=True)
class Presented:
    """The bearer token a request presented, and what this process already knows of it."""

    token: str | None
    digest: str | None
    cached: Credential | None

    @classmethod
    def of(cls, authorization: str | None) -> "Presented":
        token = credentials.bearer_token(authorization)
        digest = credentials.digest(token) if token else None
        return cls(token, digest, credentials.cache.get(digest) if digest else None)


@dataclass(frozen=True, slots=True)
class Authenticated:
    # None only for a preflight to a slug with no live server (answered like any).
    snapshot: Snapshot | None
    credential: Credential
    session_data: dict[bytes, bytes] | None
    watched: bool  # someone has this server's live inspector open


async def authenticate(redis: Redis, arrival: Arrival, *, preflight: bool) -> Authenticated:
    if not host_allowed(arrival.host):
        raise Refused(400, errors.INVALID_REQUEST, "Invalid Host header", reason="host_refused")
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
    try:
        return await _authenticate(redis, arrival, presented, state, preflight)
    except Refused as refused:
        refused.watched = state.watched
        raise


async def _authenticate(
    redis: Redis, arrival: Arrival, presented: Presented, state: State, preflight: bool
) -> Authenticated:
    key_generation = state.key_generation

    try:
        snapshot = await get_snapshot(arrival.slug, state.server_generation, arrival.version)
    except DefinitionError:
        # A stored definition that no longer compiles: the owner has to fix it. Only a caller
        # with a valid key learns it (its organization is unknown without the definition);
        # everyone else gets the answer of a protected server.
        await _refuse_as_protected(redis, arrival, presented, key_generation, preflight)
        if preflight:
            return Authenticated(None, credentials.ANONYMOUS, None, state.watched)
        raise _origin_passed(
            Refused(
                503,
                errors.INTERNAL_ERROR,
                "This MCP server's definition is invalid",
                reason="broken_definition",
            )
        ) from None
    if snapshot is None or snapshot.status == "draft":
        credential = await _refuse_as_protected(
            redis, arrival, presented, key_generation, preflight
        )
        if preflight:
            return Authenticated(None, credentials.ANONYMOUS, None, state.watched)
        raise _origin_passed(_not_served(arrival.slug, credential, snapshot))
    # The Origin check comes after the server is known: its refusal is the server's to see.
    if arrival.origin and not origin_allowed(
        arrival.origin, arrival.host, snapshot.allowed_origins
    ):
        refused = Refused(
            403, errors.INVALID_REQUEST, "Origin not allowed", reason="origin_refused"
        )
        refused.snapshot = snapshot
        raise refused
    if preflight:
        return Authenticated(snapshot, credentials.ANONYMOUS, None, state.watched)

    credential = credentials.ANONYMOUS
    try:
        if snapshot.auth_mode != "none":
            # Before the status: an outsider must not learn that a server is paused.
            credential = await _server_credential(redis, presented, key_generation, snapshot)
        if snapshot.status == "paused":
            raise Refused(
                503,
                errors.INTERNAL_ERROR,
                "This MCP server is paused",
                [("retry-after", "60")],
                reason="paused",
            )
    except Refused as refused:
        refused.snapshot = snapshot
        raise _origin_passed(refused) from None
    return Authenticated(snapshot, credential, state.session, state.watched)


def _not_served(slug: str, credential: Credential, snapshot: Snapshot | None) -> Refused:
    """A slug with no live server, to a caller with a valid credential: its own organization
    learns that it is a draft; everyone else, that no such server exists."""
    if snapshot is not None and drafts.owns(credential, snapshot):
        return Refused(
            drafts.DRAFT_STATUS,
            drafts.CODE,
            drafts.draft_message(slug),
            reason="draft",
            data=drafts.draft_error_data(slug),
        )
    return Refused(404, errors.INVALID_REQUEST, "Unknown MCP server", reason="unknown_server")


def _origin_passed(refused: Refused) -> Refused:
    refused.origin_ok = True
    return refused


async def _refuse_as_protected(
    redis: Redis,
    arrival: Arrival,
    presented: Presented,
    key_generation: str | None,
    preflight: bool,
) -> Credential:
    """For a slug with no live server behind it (unknown, draft, or broken): the same answer a
    protected server gives the same caller, so an outsider cannot tell them apart. Returns (for
    a preflight whose Origin a server without extra origins would accept: ANONYMOUS, answered
    204 like any) the caller's valid credential, who then learns what is wrong; raises the
    refusal for everyone else."""
    if arrival.origin and not origin_allowed(arrival.origin, arrival.host, ()):
        raise Refused(403, errors.INVALID_REQUEST, "Origin not allowed", reason="origin_refused")
    if preflight:
        return credentials.ANONYMOUS
    try:
        return await _valid_credential(redis, presented, key_generation, None)
    except Refused as refused:
        raise _origin_passed(refused) from None


async def _valid_credential(
    redis: Redis,
    presented: Presented,
    key_generation: str | None,
    snapshot: Snapshot | None,
) -> Credential:
    """A known, usable key or access token, else THE 401 (naming the OAuth metadata only for a
    live server that takes OAuth)."""
    token = presented.token
    if token is None:
        raise unauthorized(
            snapshot,
            "Authentication required: send Authorization: Bearer <key>",
            reason="missing_key",
        )
    credential: Credential | None
    cached = presented.cached
    if cached is not None and cached.generation == key_generation:
        credential = cached
    else:
        assert presented.digest is not None  # a token has a digest
        credential = await credentials.load_credential(redis, presented.digest)
    if credential is None:
        if credentials.is_api_key_shaped(token):
            raise bad_api_key("Invalid API key", reason="unknown_key")
        raise unauthorized(
            snapshot, "Invalid API key or access token", "invalid_token", reason="unknown_key"
        )
    if credential.suspended:
        # Only API keys are suspended (a grant of someone who left is revoked).
        raise bad_api_key(f"API key suspended: {credential.suspended}", reason="suspended_key")
    if not credential.usable(time.time()):
        if credentials.is_api_key_shaped(token):
            raise bad_api_key("API key revoked or expired", reason="revoked_key")
        raise unauthorized(
            snapshot,
            "API key or access token revoked or expired",
            "invalid_token",
            reason="revoked_key",
        )
    return credential


async def _server_credential(
    redis: Redis, presented: Presented, key_generation: str | None, snapshot: Snapshot
) -> Credential:
    """A valid credential that this server takes: an access token issued for it, or a key of
    its organization allowed on it."""
    credential = await _valid_credential(redis, presented, key_generation, snapshot)
    if credential.is_oauth:
        # An access token is for one server only (its audience, RFC 8707): elsewhere it is
        # simply not a valid token, whichever organization owns the other server.
        if credential.audience_server_id != snapshot.server_id or not accepts_oauth(
            snapshot.auth_mode
        ):
            raise unauthorized(
                snapshot,
                "This access token is not for this server",
                "invalid_token",
                reason="token_for_other_server",
            )
        assert credential.grant_id is not None  # is_oauth
        usage.touch(credential.grant_id, rkeys.GRANT_USAGE)
        return credential
    if not accepts_api_key(snapshot.auth_mode):
        raise unauthorized(
            snapshot,
            "This server does not accept API keys",
            "invalid_token",
            reason="api_keys_not_accepted",
        )
    if credential.organization_id != snapshot.organization_id:
        # Another organization's key learns nothing, not even that the server exists.
        raise Refused(
            404, errors.INVALID_REQUEST, "Unknown MCP server", reason="key_of_other_organization"
        )
    if credential.server_ids and snapshot.server_id not in credential.server_ids:
        raise Refused(
            403,
            errors.INVALID_REQUEST,
            "This API key is not allowed to use this server",
            reason="key_limited_to_other_servers",
        )
    assert credential.key_id is not None  # a loaded API key
    usage.touch(credential.key_id)
    return credential
