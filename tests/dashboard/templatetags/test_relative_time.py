from datetime import timedelta

from django.utils import timezone

from dashboard.templatetags.relative_time import ago


def test_a_moment_ago_reads_just_now_not_zero_minutes():
    now = timezone.now()
    assert ago(now - timedelta(seconds=5), now) == "just now"


def test_older_times_read_as_timesince_with_ago():
    now = timezone.now()
    assert ago(now - timedelta(minutes=3), now) == "3\xa0minutes ago"


def test_nothing_reads_as_nothing():
    assert ago(None) == ""
