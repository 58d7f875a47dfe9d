"""This process's copy of the decrypted, fresh connection tokens, so a warm call of a tool that
declares a connection runs no SQL, no Redis round trip and no decryption.

An entry is used only while it is fresh (until the token's expiry minus the refresh margin of
tokens._due, or MAX_AGE_SECONDS when the provider gave no expiry); after that the call reads the
row again and refreshes under the Redis lock as before.

Every change that matters (a connection stored, refreshed, marked for consent or revoked,
a provider changed or deleted: every write of either model in an organization) drops the
organization's entries on every process, through servers.invalidation, like the vault's cache:

- `changed` writes a Change row in the writing transaction (every process's re-check drops
  the entries within SECURITY_RECHECK_SECONDS, whatever Redis did), drops this process's
  entries at once, and after commit announces the change on the state channel, which every
  web process's mirror subscriber hands back to `servers.invalidation.drop` at once;
- the mirror clears this cache when its subscriber reconnects (announcements may be lost), and
  the re-check clears it when Redis restarts or returns from an outage.

A load that saw any drop while it read the database keeps nothing (invalidation.epoch).
"""

import threading
from dataclasses import dataclass

from cachetools import LRUCache
from django.db import transaction

from servers import invalidation, state_events
from servers.models import Change

CACHE_SIZE = 10_000
# A token without an expiry is still re-read now and then (a lost drop costs at most this).
MAX_AGE_SECONDS = 3600.0

# (organization, provider key, principal, principal id): what token_for's answer depends on
# besides the rows, which the drops cover.
Key = tuple[int, str, str, int | None]


@dataclass(frozen=True)
class Entry:
    value: str
    connection_id: int
    provider: str
    label: str
    scopes: frozenset[str]  # as granted: a tool wanting more goes the slow way (and is refused)
    fresh_until: float  # time.time()


_cache: LRUCache[Key, Entry] = LRUCache(CACHE_SIZE)
_lock = threading.Lock()  # the re-check thread drops entries while requests read them


def get(key: Key, now: float) -> Entry | None:
    with _lock:
        entry = _cache.get(key)
        if entry is not None and entry.fresh_until <= now:
            _cache.pop(key, None)
            return None
    return entry


def put(key: Key, entry: Entry, seen_epoch: int) -> None:
    """Keep `entry` unless something was dropped since `seen_epoch` (read before the load)."""
    if not invalidation.still_current(seen_epoch):
        return
    with _lock:
        _cache[key] = entry


def drop_organization(organization_id: int) -> None:
    with _lock:
        for key in [k for k in list(_cache) if k[0] == organization_id]:
            _cache.pop(key, None)


def clear() -> None:
    with _lock:
        _cache.clear()


invalidation.watch(
    Change.CONNECTION, drop=lambda subject: drop_organization(int(subject)), clear=clear
)


def _drop_here(organization_id: int) -> None:
    # Through invalidation, so a load running meanwhile in this process keeps nothing.
    invalidation.drop(Change.CONNECTION, str(organization_id))


def _announce(organization_id: int) -> None:
    _drop_here(organization_id)
    state_events.announce(state_events.CONNECTION, str(organization_id))


def changed(organization_id: int, using: str = "default") -> None:
    """A connection or provider of the organization changed: drop its tokens everywhere."""
    invalidation.record(Change.CONNECTION, str(organization_id), using)
    _drop_here(organization_id)
    # After commit too: another process may have re-read the old row before the commit.
    transaction.on_commit(lambda: _announce(organization_id), using=using)
