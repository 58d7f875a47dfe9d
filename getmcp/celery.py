"""The Celery app: broker and schedule come from Django settings (CELERY_* names).

Without REDIS_URL the settings make tasks run eagerly in-process, so `make run` needs no worker.
"""

from celery import Celery

from getmcp.environment.startup import name_settings_module

name_settings_module()

app = Celery("getmcp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Workers and beat say they are alive (signal handlers and the beat scheduler live there).
from getmcp import heartbeat  # noqa: E402, F401
