"""Periodic jobs of the accounts app."""

from datetime import UTC, datetime
from typing import cast

from celery import shared_task
from redis.exceptions import WatchError

from accounts.models import ApiKey
from infra import keys as rkeys
from infra.redis import is_embedded, sync_client

# Delete a field only while it still holds the value we read: a use recorded after our read
# stays in the hash for the next flush.
_DELETE_UNCHANGED = """
local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    removed = removed + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return removed
"""
BATCH = 1000


def _parse(raw_id: bytes, raw_time: bytes):
    try:
        return int(raw_id), datetime.fromtimestamp(float(raw_time), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


@shared_task(name="accounts.tasks.flush_key_usage")
def flush_key_usage() -> int:
    """Copy the last-used times the endpoint wrote to Redis into ApiKey.last_used_at.
    Returns how many keys were updated."""
    client = sync_client()
    usage = client.hgetall(rkeys.KEY_USAGE)
    if not usage:
        return 0
    seen = {}
    for raw_id, raw_time in usage.items():
        parsed = _parse(cast(bytes, raw_id), cast(bytes, raw_time))
        if parsed:
            seen[parsed[0]] = parsed[1]
    updated = 0
    ids = sorted(seen)
    for start in range(0, len(ids), BATCH):
        batch = ApiKey.objects.filter(pk__in=ids[start : start + BATCH]).only("pk", "last_used_at")
        changed = []
        for key in batch:
            when = seen[key.pk]
            if key.last_used_at is None or when > key.last_used_at:
                key.last_used_at = when
                changed.append(key)
        # bulk_update sends no post_save, so the keys' cache generations stay as they are.
        ApiKey.objects.bulk_update(changed, ["last_used_at"])
        updated += len(changed)
    _delete_unchanged(client, usage)
    return updated


def _delete_unchanged(client, usage: dict, key: str = rkeys.KEY_USAGE) -> None:
    if is_embedded():
        # fakeredis has no Lua without the optional lupa package; one process, so WATCH is enough.
        with client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    current = pipe.hgetall(key)
                    gone = [f for f, v in usage.items() if current.get(f) == v]
                    pipe.multi()
                    if gone:
                        pipe.hdel(key, *gone)
                    pipe.execute()
                    return
                except WatchError:
                    continue
    pairs = [part for item in usage.items() for part in item]
    script = client.register_script(_DELETE_UNCHANGED)
    for start in range(0, len(pairs), 2 * BATCH):
        script(keys=[key], args=pairs[start : start + 2 * BATCH])
