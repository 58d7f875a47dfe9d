"""Bearer API keys on the hot path: digests cached per process, revocation seen on the next request.

A cached credential stays valid only while the key's generation in Redis is the one it was loaded
under; `servers.changes` bumps it whenever a key is saved or deleted, and `servers.invalidation`
drops it when that bump was missed (Redis down, or back with old data).
"""

import time
from collections import OrderedDict
from dataclasses import dataclass

from accounts.models import ApiKey, digest_key

from .. import invalidation
from .. import keys as rkeys
from ..db import run as run_db

CACHE_SIZE = 100_000


@dataclass(frozen=True, slots=True)
class Credential:
    key_id: int | None
    organization_id: int | None
    name: str
    server_ids: frozenset
    expires_at: float | None
    revoked: bool
    generation: str

    @property
    def ident(self) -> str:
        return "anon" if self.key_id is None else f"key:{self.key_id}"

    def usable(self, now: float) -> bool:
        return not self.revoked and (self.expires_at is None or self.expires_at > now)


ANONYMOUS = Credential(None, None, "anonymous", frozenset(), None, False, "0")


class KeyCache:
    def __init__(self, size: int = CACHE_SIZE):
        self.size = size
        self._known: OrderedDict[str, Credential] = OrderedDict()
        # Keys are random, so a digest that matched no key can only match one issued later,
        # which no client can have presented before: unknown digests may be cached for good.
        self._unknown: OrderedDict[str, None] = OrderedDict()

    def get(self, digest: str):
        return self._known.get(digest)

    def is_unknown(self, digest: str) -> bool:
        return digest in self._unknown

    def put(self, digest: str, credential: Credential | None) -> None:
        target = self._known if credential else self._unknown
        target[digest] = credential
        if len(target) > self.size:
            target.popitem(last=False)

    def drop(self, digest: str) -> None:
        self._known.pop(digest, None)

    def clear(self) -> None:
        self._known.clear()
        self._unknown.clear()


cache = KeyCache()


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _load(digest: str, generation: str) -> Credential | None:
    invalidation.ensure_started()
    key = ApiKey.objects.filter(digest=digest).first()
    if key is None:
        return None
    return Credential(
        key_id=key.pk,
        organization_id=key.organization_id,
        name=key.name,
        server_ids=frozenset(key.servers.values_list("pk", flat=True)),
        expires_at=key.expires_at.timestamp() if key.expires_at else None,
        revoked=key.revoked_at is not None,
        generation=generation,
    )


async def load_credential(redis, digest: str) -> Credential | None:
    """Cache miss: read the generation before the row, so a change racing the load invalidates it."""
    if cache.is_unknown(digest):
        return None
    generation = await redis.get(rkeys.key_generation(digest))
    epoch = invalidation.epoch()
    credential = await run_db(_load, digest, generation.decode() if generation else "0")
    if invalidation.still_current(epoch):
        cache.put(digest, credential)
    return credential


def digest(token: str) -> str:
    return digest_key(token)


def now() -> float:
    return time.time()
