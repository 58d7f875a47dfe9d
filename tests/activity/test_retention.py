from datetime import timedelta

import pytest

from activity.models import CallLog
from activity.retention import (
    default_retention_days,
    purge_call_log,
    retention_days,
    set_retention_days,
)
from getmcp.environment import Environment


def test_the_default_retention_is_30_days_and_follows_the_setting(settings):
    assert Environment({}).CALL_LOG_RETENTION_DAYS == 30
    assert Environment({"CALL_LOG_RETENTION_DAYS": "9"}).CALL_LOG_RETENTION_DAYS == 9
    settings.CALL_LOG_RETENTION_DAYS = 4
    assert default_retention_days() == 4


def test_the_purge_deletes_calls_older_than_the_retention(server, make_call, now, settings):
    settings.CALL_LOG_RETENTION_DAYS = 30
    old = make_call(server, minutes_ago=31 * 24 * 60)
    recent = make_call(server, minutes_ago=29 * 24 * 60)

    assert purge_call_log(now=now) == 1
    assert list(CallLog.objects.filter(server=server)) == [recent]
    assert not CallLog.objects.filter(pk=old.pk).exists()


def test_an_organization_override_wins_over_the_default(
    server, org, outsider_org, make_call, now, settings
):
    settings.CALL_LOG_RETENTION_DAYS = 30
    set_retention_days(org, 2)
    assert retention_days(org) == 2
    three_days = 3 * 24 * 60
    mine = make_call(server, minutes_ago=three_days)
    theirs = CallLog.objects.create(
        organization=outsider_org, at=now - timedelta(minutes=three_days), method="ping"
    )

    assert purge_call_log(now=now) == 1
    assert not CallLog.objects.filter(pk=mine.pk).exists()
    assert CallLog.objects.filter(pk=theirs.pk).exists()

    set_retention_days(org, None)
    assert retention_days(org) == 30


def test_a_retention_below_one_day_is_refused(org):
    with pytest.raises(ValueError, match="days"):
        set_retention_days(org, 0)
