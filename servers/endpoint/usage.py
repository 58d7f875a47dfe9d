"""Key last-used times: collected in memory and written to Redis every few seconds, so the
hot path adds no round trip; accounts.tasks.flush_key_usage moves them into Postgres."""

import asyncio
import contextlib
import time

from .. import keys as rkeys
from ..redis import async_client

FLUSH_SECONDS = 5.0
_pending: dict[int, int] = {}
_flusher: asyncio.Task | None = None


def touch(key_id: int) -> None:
    global _flusher
    _pending[key_id] = int(time.time())
    if _flusher is None or _flusher.done():
        _flusher = asyncio.get_running_loop().create_task(_flush_forever())


async def flush() -> None:
    if not _pending:
        return
    batch = dict(_pending)
    _pending.clear()
    try:
        await async_client().hset(rkeys.KEY_USAGE, mapping=batch)
    except Exception:
        for key_id, used in batch.items():
            _pending.setdefault(key_id, used)
        raise


async def _flush_forever() -> None:
    while True:
        await asyncio.sleep(FLUSH_SECONDS)
        # Redis away for a moment: flush() kept the times for the next round.
        with contextlib.suppress(Exception):
            await flush()
