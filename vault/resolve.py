"""Reading secrets for a call (masking their values out of text lives in vault.masking).

Decrypted values are cached per process, per (organization, server, live/test), and dropped
when the organization's vault generation in Redis moves (every save or delete of one of its
secrets bumps it), so a warm call costs one Redis GET and no SQL.
"""

import threading
from collections.abc import Iterator, Mapping

from cachetools import LRUCache
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from infra import keys
from infra.redis import async_client, sync_client
from servers import invalidation
from servers.db import run as run_db
from servers.models import Change
from servers.outages import best_effort

from .models import Secret


class SecretValues(Mapping):
    """Name -> value; its repr names the secrets but never shows a value."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<SecretValues {', '.join(sorted(self._values)) or '(none)'}>"

    __str__ = __repr__


def generation_key(organization_id: int) -> str:
    return keys.vault_generation(organization_id)


def secrets_for(organization_id: int, server_id: int | None, *, test: bool = False) -> SecretValues:
    """The secrets a server's http configs see: organization-wide ones, overridden by the
    server's own of the same name."""
    rows = Secret.objects.filter(organization_id=organization_id).filter(
        Q(server__isnull=True) | Q(server_id=server_id)
    )
    values: dict[str, str] = {}
    # Organization-wide first, so the server's own rows overwrite them.
    for secret in sorted(rows, key=lambda s: s.server_id is not None):
        values[secret.name] = secret.reveal(test=test)
    return SecretValues(values)


# (organization, server, test) -> (generation, values); at most VAULT_CACHE_SIZE entries, the
# least recently used dropped first. The lock: signal handlers drop entries from other threads
# while requests read them, and a read reorders the LRU.
_cache: LRUCache[tuple, tuple[bytes | None, SecretValues]] = LRUCache(settings.VAULT_CACHE_SIZE)
_lock = threading.Lock()


async def asecrets_for(
    organization_id: int, server_id: int | None, *, test: bool = False
) -> SecretValues:
    generation = await async_client().get(generation_key(organization_id))
    key = (organization_id, server_id, test)
    with _lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] == generation and generation is not None:
        return cached[1]
    epoch = invalidation.epoch()
    values = await run_db(_secrets_watched, organization_id, server_id, test=test)
    if generation is None:
        # Start the counter so later changes are seen; the values just read are current.
        await async_client().set(generation_key(organization_id), 0, nx=True)
        generation = await async_client().get(generation_key(organization_id))
    if invalidation.still_current(epoch):
        with _lock:
            _cache[key] = (generation, values)
    return values


def _secrets_watched(organization_id, server_id, *, test):
    invalidation.ensure_started()
    return secrets_for(organization_id, server_id, test=test)


def drop_organization(organization_id: int) -> None:
    with _lock:
        for key in [k for k in list(_cache) if k[0] == organization_id]:
            _cache.pop(key, None)


def clear_cache() -> None:
    with _lock:
        _cache.clear()


invalidation.watch(
    Change.VAULT, drop=lambda subject: drop_organization(int(subject)), clear=clear_cache
)


def bump_generation(organization_id: int) -> None:
    best_effort(sync_client().incr, generation_key(organization_id))


@receiver(post_save, sender=Secret)
@receiver(post_delete, sender=Secret)
def _secret_changed(sender, instance, using: str = "default", **kwargs) -> None:
    organization_id = instance.organization_id
    # Durably, so every process drops its copy even if Redis misses the bumps below.
    invalidation.record(Change.VAULT, str(organization_id), using)
    # Now, so this process stops using the old value at once; and after commit, so no other
    # process keeps a value it re-read before the transaction became visible.
    drop_organization(organization_id)
    bump_generation(organization_id)
    transaction.on_commit(lambda: bump_generation(organization_id))
