from unittest import mock

from getmcp import embedded_beat


def test_it_runs_each_entry_when_its_interval_has_passed(settings):
    settings.CELERY_BEAT_SCHEDULE = {
        "often": {"task": "accounts.tasks.flush_key_usage", "schedule": 5.0},
        "rarely": {"task": "mcptasks.reap_tasks", "schedule": 60.0},
    }
    with mock.patch("celery.app.task.Task.__call__") as call:
        last = {}
        assert embedded_beat.run_due(last, 100.0) == ["often", "rarely"]
        assert embedded_beat.run_due(last, 104.0) == []
        assert embedded_beat.run_due(last, 105.0) == ["often"]
        assert call.call_count == 3


def test_it_starts_only_in_embedded_mode(settings):
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    assert embedded_beat.start() is False
