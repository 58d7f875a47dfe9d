"""Key (and OAuth grant) last-used times: collected in memory and written to Redis every few seconds, so the
hot path adds no round trip; accounts.tasks.flush_key_usage moves them into Postgres."""

import asyncio
import contextlib
import time
from typing import Any

from redis.typing import EncodableT

from infra import keys as rkeys
from infra.redis import async_client

from .credentials import Credential

FLUSH_SECONDS = 5.0
_pending: dict[tuple[str, int], int] = {}
_flusher: asyncio.Task[Any] | None = None


def touch(key_id: int, hash_key: str = rkeys.KEY_USAGE) -> None:
    global _flusher
    _pending[(hash_key, key_id)] = int(time.time())
    if _flusher is None or _flusher.done():
        _flusher = asyncio.get_running_loop().create_task(_flush_forever())


def used(credential: Credential) -> None:
    """A credential's last use: a grant's for an access token, else its key's."""
    if credential.grant_id is not None:
        touch(credential.grant_id, rkeys.GRANT_USAGE)
    elif credential.key_id is not None:
        touch(credential.key_id)


async def flush() -> None:
    if not _pending:
        return
    batch = dict(_pending)
    _pending.clear()
    by_hash: dict[str, dict[EncodableT, EncodableT]] = {}
    for (hash_key, key_id), used in batch.items():
        by_hash.setdefault(hash_key, {})[key_id] = used
    try:
        pipe = async_client().pipeline(transaction=False)
        for hash_key, mapping in by_hash.items():
            pipe.hset(hash_key, mapping=mapping)
        await pipe.execute()
    except Exception:
        for item, used in batch.items():
            _pending.setdefault(item, used)
        raise


async def _flush_forever() -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        # Redis away for a moment: flush() kept the times for the next round.
        with contextlib.suppress(Exception):
            await flush()
