from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        # Model changes and Django's login signals become audit rows (audit/signals.py).
        from . import signals  # noqa: F401
