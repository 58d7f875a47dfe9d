"""The Celery app: broker and schedule come from Django settings (CELERY_* names).

Without REDIS_URL the settings make tasks run eagerly in-process, so `make run` needs no worker.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")

app = Celery("getmcp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Workers and beat say they are alive (signal handlers and the beat scheduler live there).
from getmcp import heartbeat  # noqa: E402, F401
