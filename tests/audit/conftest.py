import pytest


@pytest.fixture(autouse=True)
def checkpoint_dir(settings, tmp_path):
    """Each test its own checkpoint directory: a checkpoint of another test's rows would name
    heads this test's database never had."""
    settings.AUDIT_CHECKPOINT_DIR = str(tmp_path / "audit-checkpoints")
    return tmp_path / "audit-checkpoints"


@pytest.fixture
def aged(monkeypatch):
    """`with aged(days):` rows appended inside are written as if `days` ago (the chain reads
    its time from audit.chain.timezone)."""
    from contextlib import contextmanager
    from datetime import timedelta
    from types import SimpleNamespace

    from django.utils import timezone

    import audit.chain

    @contextmanager
    def back(days: float):
        monkeypatch.setattr(
            audit.chain,
            "timezone",
            SimpleNamespace(now=lambda: timezone.now() - timedelta(days=days)),
        )
        try:
            yield
        finally:
            monkeypatch.setattr(audit.chain, "timezone", timezone)

    return back
