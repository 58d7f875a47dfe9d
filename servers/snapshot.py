"""The per-process cache of compiled snapshots: what the endpoint, the REST surfaces and the
tasks ask for a server's Snapshot (compiling it is servers/compiled/).

A warm request finds its snapshot by slug and generation without touching Postgres; the endpoint
reads the generation from Redis (infra.keys.server_generation) in its one pipeline.
"""

import threading
from dataclasses import replace

import redis
from cachetools import LRUCache
from django.conf import settings

from . import invalidation
from .compiled.compile import compile_definition
from .compiled.snapshot import DefinitionError, Snapshot

# Callers ask this module for snapshots; DefinitionError, Snapshot and compile_definition are
# its vocabulary, defined in servers/compiled/.
__all__ = [
    "DefinitionError",
    "Snapshot",
    "clear_cache",
    "compile_definition",
    "definition_for",
    "drop_server",
    "get_snapshot",
    "load_snapshot",
]


def definition_for(server, version: str | None = None) -> dict | None:
    """The definition a server serves: its latest published version (its draft while it has
    none), or the pinned `version`; None when that version does not exist."""
    from .publishing import definition_to_serve

    return definition_to_serve(server, version)


def _cache_key(slug: str, version: str | None) -> str:
    return slug if version is None else f"{slug}@{version}"


def _load(slug: str, generation: str, version: str | None = None) -> Snapshot | None:
    from .models import Server

    server = Server.objects.filter(slug=slug).select_related("organization").first()
    if server is None:
        return None
    definition = definition_for(server, version)
    if definition is None:
        return None
    snapshot = compile_definition(
        definition,
        server_id=server.pk,
        organization_id=server.organization_id,
        generation=generation,
        owner_id=server.organization.billing_owner_id,
    )
    from .access import compile_role_access
    from .embeddings import vectors_for
    from .quotas import monthly_quota

    return replace(
        snapshot,
        role_scopes=compile_role_access(server.role_access),
        monthly_call_quota=monthly_quota(server.organization),
        tool_vectors=vectors_for(snapshot),
    )


# slug -> (generation, snapshot or None for an unknown slug, or the DefinitionError a broken
# definition raised). Entries are replaced whole, never changed in place; a broken definition
# costs no SQL until it changes either. At most SNAPSHOT_CACHE_SIZE entries, the least recently
# used dropped first (it is compiled again on its next call). The lock: loads fill the cache from
# worker threads while the event loop reads it, and a read reorders the LRU.
_cache: LRUCache[str, tuple[str, Snapshot | None, DefinitionError | None]] = LRUCache(
    settings.SNAPSHOT_CACHE_SIZE
)
_lock = threading.Lock()


def _cached(key: str, generation: str):
    with _lock:
        entry = _cache.get(key)
    if entry is None or entry[0] != generation:
        return False, None
    if entry[2] is not None:
        raise entry[2]
    return True, entry[1]


def _load_into_cache(slug: str, generation: str, version: str | None = None) -> Snapshot | None:
    invalidation.ensure_started()
    key = _cache_key(slug, version)
    # A change seen by this process's re-check while the rows were read may not be in them.
    epoch = invalidation.epoch()
    try:
        snapshot = _load(slug, generation, version)
    except DefinitionError as exc:
        if invalidation.still_current(epoch):
            with _lock:
                _cache[key] = (generation, None, exc)
        raise
    if invalidation.still_current(epoch):
        with _lock:
            _cache[key] = (generation, snapshot, None)
    return snapshot


async def get_snapshot(
    slug: str, generation: str | None, version: str | None = None
) -> Snapshot | None:
    """The snapshot of `slug` (or of its published `version`) at `generation` (the Redis value;
    None when the key is absent).

    None for an unknown slug or version; DefinitionError when the stored definition cannot be
    served. Publishing bumps the generation, so a pinned entry is checked the same way.
    """
    generation = "0" if generation is None else generation
    hit, snapshot = _cached(_cache_key(slug, version), generation)
    if hit:
        return snapshot
    from .db import run as run_db

    return await run_db(_load_into_cache, slug, generation, version)


def load_snapshot(slug: str, version: str | None = None) -> Snapshot | None:
    """For sync callers (REST, management commands): the current snapshot, through the cache."""
    from infra import keys
    from infra.redis import sync_client

    try:
        raw = sync_client().get(keys.server_generation(slug))
    except redis.RedisError:
        # Redis unreachable (a failover under way): the rows are the truth. Nothing is cached
        # under a generation nobody could read.
        return _load(slug, "unknown", version)
    generation = "0" if raw is None else raw.decode()
    hit, snapshot = _cached(_cache_key(slug, version), generation)
    if hit:
        return snapshot
    return _load_into_cache(slug, generation, version)


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def drop_server(slug: str) -> None:
    """Forget every cached snapshot of `slug` (its draft and each pinned version)."""
    with _lock:
        for key in [k for k in list(_cache) if k == slug or k.startswith(slug + "@")]:
            _cache.pop(key, None)


invalidation.watch("server", drop=drop_server, clear=clear_cache)  # Change.SERVER
