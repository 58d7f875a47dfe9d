"""getmcp/settings.py with a `sentinel://` REDIS_URL: the broker and the Channels layer follow the
same Sentinels and master unless set apart, and a URL the clients could not use stops the start.
Each case is a fresh interpreter: the settings module is read once per process."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SENTINELS = "sentinel://:pw@10.0.0.1:26379;sentinel://10.0.0.2:26379/3"
READ = """
import json
from django.conf import settings
print(json.dumps({
    "broker": settings.CELERY_BROKER_URL,
    "transport": getattr(settings, "CELERY_BROKER_TRANSPORT", None),
    "options": getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None),
    "channels": settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"],
}))
"""


def settings_with(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("REDIS_", "CELERY_"))}
    base.pop("CHANNELS_REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-c", READ],
        cwd=ROOT,
        env=base | {"DJANGO_SETTINGS_MODULE": "getmcp.settings"} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_broker_and_the_channels_layer_follow_the_sentinels_of_the_state():
    done = settings_with(
        REDIS_URL=SENTINELS,
        REDIS_SENTINEL_MASTER="getmcp",
        REDIS_CONNECT_TIMEOUT_SECONDS="1.5",
        REDIS_SOCKET_TIMEOUT_SECONDS="2.5",
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["broker"] == SENTINELS
    assert found["transport"] == "infra.broker:SentinelTransport"
    # The broker's Sentinels and master get the state clients' deadlines.
    assert found["options"] == {
        "master_name": "getmcp",
        "socket_connect_timeout": 1.5,
        "socket_timeout": 2.5,
    }
    assert found["channels"] == [
        {
            "sentinels": [["10.0.0.1", 26379], ["10.0.0.2", 26379]],
            "master_name": "getmcp",
            "db": 3,
            "password": "pw",
        }
    ]


def test_a_sentinel_url_without_the_masters_name_stops_the_start():
    done = settings_with(REDIS_URL=SENTINELS)
    assert done.returncode != 0
    assert "needs REDIS_SENTINEL_MASTER" in done.stderr


def test_a_sentinel_url_is_refused_as_cluster_nodes():
    done = settings_with(
        REDIS_URL=SENTINELS,
        REDIS_SENTINEL_MASTER="getmcp",
        REDIS_CLUSTER="true",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        CHANNELS_REDIS_URL="redis://127.0.0.1:6379/0",
    )
    assert done.returncode != 0
    assert "REDIS_CLUSTER takes cluster nodes" in done.stderr
