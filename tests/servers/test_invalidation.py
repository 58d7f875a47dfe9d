"""The change log (servers/invalidation.py): every committed change is found by the next look,
whatever order the writers committed in, and drops what it names from the process caches."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import ApiKey, User
from gateway.pipeline import credentials as auth
from servers import invalidation
from servers.models import Change

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the change log is written on Postgres only"
)


@pytest.fixture
def org(transactional_db):
    return User.objects.create_user(
        "log@example.com", "long enough password 9"
    ).personal_organization()


def _cache_credential(digest: str) -> None:
    auth.cache.put(digest, auth.Credential(1, 1, "k", frozenset(), None, False, "0"))


def test_a_key_revoked_after_a_look_is_dropped_from_the_cache_by_the_next_look(org):
    key, _raw = ApiKey.issue(org, "watched")
    recheck = invalidation.Recheck()
    recheck.look()
    _cache_credential(key.digest)
    key.revoke()
    assert recheck.look() >= 1
    assert auth.cache.get(key.digest) is None
    assert recheck.look() == 0  # seen once, dropped once


def test_a_slow_transaction_that_commits_an_older_row_late_is_still_found(org):
    recheck = invalidation.Recheck()
    recheck.look()
    slow_key, _ = ApiKey.issue(org, "slow")
    fast_key, _ = ApiKey.issue(org, "fast")
    recheck.look()
    recorded, release, done = threading.Event(), threading.Event(), threading.Event()

    def slow_writer():
        try:
            with transaction.atomic():
                invalidation.record(Change.KEY, slow_key.digest)  # the older transaction id
                recorded.set()
                release.wait(10)
        finally:
            connection.close()
            done.set()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    assert recorded.wait(10)
    with transaction.atomic():
        invalidation.record(Change.KEY, fast_key.digest)  # a newer id, committed first
    _cache_credential(slow_key.digest)
    _cache_credential(fast_key.digest)
    recheck.look()
    assert auth.cache.get(fast_key.digest) is None
    assert auth.cache.get(slow_key.digest) is not None  # not committed yet: nothing to see

    release.set()
    assert done.wait(10)
    thread.join()
    recheck.look()
    assert auth.cache.get(slow_key.digest) is None


def test_a_loader_does_not_cache_what_it_read_across_a_drop(org):
    seen = invalidation.epoch()
    invalidation.drop(Change.KEY, "nothing-cached")
    assert not invalidation.still_current(seen)


def test_old_rows_are_pruned(org):
    old, _ = ApiKey.issue(org, "old")
    # Only this test's row ages: live servers may still have to read what other tests wrote.
    assert Change.objects.filter(subject=old.digest).update(
        created_at=timezone.now() - timedelta(hours=30)
    )
    new, _ = ApiKey.issue(org, "new")
    assert invalidation.prune(24) >= 1
    assert Change.objects.filter(created_at__lt=timezone.now() - timedelta(hours=24)).count() == 0
    assert not Change.objects.filter(subject=old.digest).exists()
    assert Change.objects.filter(subject=new.digest).exists()
