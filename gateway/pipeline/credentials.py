"""Bearer API keys and OAuth access tokens on the hot path: digests cached per process,
revocation seen on the next request.

A cached credential stays valid only while the digest's generation in Redis is the one it was
loaded under; `servers.changes` bumps it whenever a key is saved or deleted, `oauth.grants`
whenever a grant (and so its access tokens) is revoked, and `servers.invalidation` drops it when
that bump was missed (Redis down, or back with old data).
"""

import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from cachetools import LRUCache
from django.conf import settings
from redis.asyncio import Redis

from accounts.models import KEY_PREFIX, ApiKey, Membership, digest_key
from accounts.policy import LEAST_ROLE, Action, role_allows
from infra import keys as rkeys
from servers import invalidation
from servers.access import key_access
from servers.db import run as run_db
from servers.models import accepts_api_key, accepts_oauth
from servers.quotas import NO_LIMITS, Limits, limits_of
from servers.snapshot import Snapshot

OAUTH_TOKEN_PREFIX = "gmcp_at_"


# What the authorization server hands out (oauth/): access and refresh tokens, codes, client
# secrets. Sent as a bearer, one of these is an OAuth client's, whose 401 it can act on.
OAUTH_FAMILY_PREFIXES = (OAUTH_TOKEN_PREFIX, "gmcp_rt_", "gmcp_ac_", "gmcp_cs_", "gmcp_client_")


def is_api_key_shaped(token: str) -> bool:
    """A token written like one of our API keys (not anything OAuth issues): a caller who sent
    it meant to use a key, so signing in through OAuth is not what would help them."""
    return token.startswith(KEY_PREFIX) and not token.startswith(OAUTH_FAMILY_PREFIXES)


# Never a hex digit: the cache and loader tell an access token's digest from a key's by it.
OAUTH_DIGEST_MARK = "oauth:"


@dataclass(frozen=True, slots=True)
class Credential:
    key_id: int | None
    organization_id: int | None
    name: str
    server_ids: frozenset[int]
    expires_at: float | None
    revoked: bool
    generation: str
    # OAuth access tokens: the grant they were issued under, who it acts as, for which server.
    grant_id: int | None = None
    # The principal: the person a grant or a personal key acts as, or the service account a
    # service account's key acts as (accounts.ServiceAccount).
    user_id: int | None = None
    service_account_id: int | None = None
    client_name: str = ""
    audience_server_id: int | None = None
    scopes: frozenset[str] = frozenset()
    # Governance, compiled once per load: per-server access limits (servers/access.py), the
    # role of the member behind the key or grant, and its call limits (servers/quotas.py).
    access: MappingProxyType[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    role: str = ""
    limits: Limits = NO_LIMITS
    # Why a key of a person is held back though not revoked: they left the organization, or their
    # role may no longer hold keys (accounts/policy.py). Derived at load, so it lifts by itself.
    suspended: str = ""

    @property
    def is_oauth(self) -> bool:
        return self.grant_id is not None

    @property
    def ident(self) -> str:
        if self.grant_id is not None:
            # Per grant, not per token: a refreshed token keeps its sessions and rate window.
            return f"grant:{self.grant_id}"
        return "anon" if self.key_id is None else f"key:{self.key_id}"

    def usable(self, now: float) -> bool:
        return (
            not self.revoked
            and not self.suspended
            and (self.expires_at is None or self.expires_at > now)
        )


ANONYMOUS = Credential(None, None, "anonymous", frozenset(), None, False, "0")


class KeyCache:
    """Credentials by digest, least recently used first out, `KEY_CACHE_SIZE` of each kind.

    A lock, because `servers.invalidation` drops entries from its own thread while requests
    read them (a read reorders the LRU; uncontended, the lock costs well under a microsecond)."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or settings.KEY_CACHE_SIZE
        self._lock = threading.Lock()
        self._known: LRUCache[str, Credential] = LRUCache(self.size)
        # Keys are random, so a digest that matched no key can only match one issued later,
        # which no client can have presented before: unknown digests may be cached for good.
        self._unknown: LRUCache[str, None] = LRUCache(self.size)

    def get(self, digest: str) -> Credential | None:
        with self._lock:
            return self._known.get(digest)

    def is_unknown(self, digest: str) -> bool:
        with self._lock:
            return self._unknown.get(digest, False) is None

    def put(self, digest: str, credential: Credential | None) -> None:
        with self._lock:
            if credential:
                self._known[digest] = credential
            else:
                self._unknown[digest] = None

    def drop(self, digest: str) -> None:
        with self._lock:
            self._known.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._known.clear()
            self._unknown.clear()

    def __len__(self) -> int:
        return len(self._known) + len(self._unknown)


cache = KeyCache()
invalidation.watch("key", drop=cache.drop, clear=cache.clear)  # Change.KEY


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _load(digest: str, generation: str) -> Credential | None:
    invalidation.ensure_started()
    from oauth.access import load_access_token

    if digest.startswith(OAUTH_DIGEST_MARK):
        token: Credential | None = load_access_token(
            digest[len(OAUTH_DIGEST_MARK) :], generation, Credential
        )
        return token
    key = (
        ApiKey.objects.select_related("created_by", "service_account").filter(digest=digest).first()
    )
    if key is None:
        return None
    role, suspended = key_holder(key)
    return Credential(
        key_id=key.pk,
        organization_id=key.organization_id,
        name=key.name,
        server_ids=frozenset(key.servers.values_list("pk", flat=True)),
        expires_at=key.expires_at.timestamp() if key.expires_at else None,
        revoked=key.revoked_at is not None,
        generation=generation,
        access=key_access(key.access),
        role=role,
        limits=limits_of(key.limits),
        suspended=suspended,
        user_id=None if key.service_account_id else key.created_by_id,
        service_account_id=key.service_account_id,
    )


def key_holder(key: ApiKey) -> tuple[str, str]:
    """(the role a key is judged by, why it is suspended or ""): a key acts as its principal, a
    service account or else the person who created it, with that principal's current role, so
    it never reaches more than they may.

    A service account's key follows the account's role and is suspended while the account is
    disabled. A personal key whose creator left the organization (or was deactivated), or whose
    role may not hold keys (viewers, docs/roles.md), is suspended. A key with neither (made
    outside every surface; the migration moved older ones to a service account) is judged as
    the least role that may hold keys: never wider than any member's."""
    least = LEAST_ROLE[Action.KEY_CREATE]
    account = key.service_account
    if account is not None:
        if account.disabled_at is not None:
            return account.role, f"its service account ({account.name}) is disabled"
        return account.role, ""
    creator = key.created_by
    if creator is None:
        return least, ""
    role = (
        Membership.objects.filter(user_id=creator.pk, organization_id=key.organization_id)
        .values_list("role", flat=True)
        .first()
    )
    if role is None or not creator.is_active:
        return "", "its creator is no longer a member of the organization"
    if not role_allows(role, Action.KEY_CREATE):
        return role, f"its creator's role ({role}) may not hold keys"
    return role, ""


async def load_credential(redis: Redis, digest: str) -> Credential | None:
    """Cache miss: read the generation before the row, so a change racing the load invalidates it."""
    if cache.is_unknown(digest):
        return None
    generation = await redis.get(rkeys.key_generation(generation_digest(digest)))
    epoch = invalidation.epoch()
    generation = cast(bytes | None, generation)
    credential: Credential | None = await run_db(
        _load, digest, generation.decode() if generation else "0"
    )
    if invalidation.still_current(epoch):
        cache.put(digest, credential)
    return credential


def digest(token: str) -> str:
    """The cache key of a bearer token: an API key's digest, or an access token's with a mark."""
    if token.startswith(OAUTH_TOKEN_PREFIX):
        return OAUTH_DIGEST_MARK + digest_key(token)
    return digest_key(token)


def generation_digest(cache_digest: str) -> str:
    """The digest whose Redis generation guards a cached credential (the stored digest)."""
    return cache_digest.removeprefix(OAUTH_DIGEST_MARK)


def now() -> float:
    return time.time()


# -- what a request presented, judged ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Presented:
    """The bearer token a request presented, and what this process already knows of it."""

    token: str | None
    digest: str | None
    cached: Credential | None

    @classmethod
    def of(cls, authorization: str | None) -> "Presented":
        token = bearer_token(authorization)
        found = digest(token) if token else None
        return cls(token, found, cache.get(found) if found else None)


@dataclass(frozen=True, slots=True)
class Rejected:
    """Why a presented credential is not taken: a row of refused.ANSWERS, and for a suspended
    key, why it is suspended."""

    why: str
    detail: str = ""


async def check(
    redis: Redis, presented: Presented, key_generation: str | None, snapshot: Snapshot | None
) -> Credential | Rejected:
    """A known, usable key or access token, and for a live server (`snapshot`) one that it
    takes: an access token issued for it, or a key of its organization allowed on it."""
    token = presented.token
    if token is None:
        return Rejected("missing_key")
    credential: Credential | None
    cached = presented.cached
    if cached is not None and cached.generation == key_generation:
        credential = cached
    else:
        assert presented.digest is not None  # a token has a digest
        credential = await load_credential(redis, presented.digest)
    key_shaped = is_api_key_shaped(token)
    if credential is None:
        return Rejected("unknown_key" if key_shaped else "unknown_token")
    if credential.suspended:
        return Rejected("suspended_key", credential.suspended)
    if not credential.usable(time.time()):
        return Rejected("revoked_key" if key_shaped else "revoked_token")
    if snapshot is None:
        return credential
    if credential.is_oauth:
        # An access token is for one server only (its audience, RFC 8707): elsewhere it is
        # simply not a valid token, whichever organization owns the other server.
        if credential.audience_server_id != snapshot.server_id or not accepts_oauth(
            snapshot.auth_mode
        ):
            return Rejected("token_for_other_server")
        return credential
    if not accepts_api_key(snapshot.auth_mode):
        return Rejected("api_keys_not_accepted")
    if credential.organization_id != snapshot.organization_id:
        return Rejected("key_of_other_organization")
    if credential.server_ids and snapshot.server_id not in credential.server_ids:
        return Rejected("key_limited_to_other_servers")
    return credential


def owns_draft(credential: Credential, snapshot: Snapshot) -> bool:
    """Whether a valid credential belongs to a draft's organization (an API key of it, or an
    access token issued for this very server): it is told that the server is a draft."""
    if credential.is_oauth:
        return credential.audience_server_id == snapshot.server_id
    return credential.organization_id is not None and (
        credential.organization_id == snapshot.organization_id
    )
