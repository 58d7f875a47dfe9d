"""accounts.tasks.flush_key_usage against the real Redis of REDIS_URL."""

from datetime import UTC, datetime

import pytest

import accounts.tasks as tasks
from accounts.models import ApiKey
from infra import keys as rkeys
from infra.redis import is_embedded, sync_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis():
    if is_embedded():
        pytest.skip("needs REDIS_URL: the flush is proven against a real Redis")
    client = sync_client()
    client.delete(rkeys.KEY_USAGE)
    yield client
    client.delete(rkeys.KEY_USAGE)


def at(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def test_it_moves_last_used_times_into_postgres_and_empties_the_hash(redis, org):
    first, _ = ApiKey.issue(org, "one")
    second, _ = ApiKey.issue(org, "two")
    redis.hset(rkeys.KEY_USAGE, mapping={first.pk: 1_900_000_000, second.pk: "1900000100.5"})
    assert tasks.flush_key_usage() == 2
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.last_used_at == at(1_900_000_000)
    assert second.last_used_at == at(1_900_000_100.5)
    assert redis.hlen(rkeys.KEY_USAGE) == 0
    assert tasks.flush_key_usage() == 0


def test_a_use_recorded_during_the_flush_is_kept_for_the_next_one(redis, org, monkeypatch):
    key, _ = ApiKey.issue(org, "busy")
    redis.hset(rkeys.KEY_USAGE, key.pk, 1_900_000_000)
    original = tasks._delete_unchanged

    def endpoint_writes_meanwhile(client, usage):
        client.hset(rkeys.KEY_USAGE, key.pk, 1_900_000_050)
        original(client, usage)

    monkeypatch.setattr(tasks, "_delete_unchanged", endpoint_writes_meanwhile)
    assert tasks.flush_key_usage() == 1
    assert redis.hget(rkeys.KEY_USAGE, key.pk) == b"1900000050"
    monkeypatch.setattr(tasks, "_delete_unchanged", original)
    tasks.flush_key_usage()
    key.refresh_from_db()
    assert key.last_used_at == at(1_900_000_050)
    assert redis.hlen(rkeys.KEY_USAGE) == 0


def test_an_older_time_never_moves_last_used_backwards(redis, org):
    key, _ = ApiKey.issue(org, "k")
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=at(1_900_000_000))
    redis.hset(rkeys.KEY_USAGE, key.pk, 1_800_000_000)
    assert tasks.flush_key_usage() == 0
    key.refresh_from_db()
    assert key.last_used_at == at(1_900_000_000)
    assert redis.hlen(rkeys.KEY_USAGE) == 0


def test_entries_of_deleted_keys_and_garbage_are_dropped_without_harm(redis, org):
    key, _ = ApiKey.issue(org, "k")
    redis.hset(rkeys.KEY_USAGE, mapping={key.pk: 1_900_000_000, 999_999: 1, "junk": "x"})
    assert tasks.flush_key_usage() == 1
    assert redis.hlen(rkeys.KEY_USAGE) == 0


def test_it_is_registered_as_the_celery_task_the_beat_schedule_names():
    assert tasks.flush_key_usage.name == "accounts.tasks.flush_key_usage"


def test_the_watch_path_for_embedded_mode_also_keeps_a_concurrent_use(redis, org, monkeypatch):
    key, _ = ApiKey.issue(org, "embedded")
    other, _ = ApiKey.issue(org, "other")
    redis.hset(rkeys.KEY_USAGE, mapping={key.pk: 1_900_000_000, other.pk: 1_900_000_000})
    monkeypatch.setattr(tasks, "is_embedded", lambda: True)
    original = tasks._delete_unchanged

    def endpoint_writes_meanwhile(client, usage):
        client.hset(rkeys.KEY_USAGE, key.pk, 1_900_000_050)
        original(client, usage)

    monkeypatch.setattr(tasks, "_delete_unchanged", endpoint_writes_meanwhile)
    assert tasks.flush_key_usage() == 2
    assert redis.hgetall(rkeys.KEY_USAGE) == {str(key.pk).encode(): b"1900000050"}
