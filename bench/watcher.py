"""A person with the live inspector open, for the getmcp-watched side of bench/run.py.

Logs the bench owner in (a dashboard session made the way Django's login makes one), opens the
inspector's WebSocket on the benchmarked server process itself, as a browser tab would, and
counts the events it receives until stopped (SIGTERM); prints {"events": n, "skipped": m}.
Usage: watcher.py WS_URL ORIGIN (run with the bench's DATABASE_URL and REDIS_URL).
"""

import asyncio
import json
import os
import signal
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")
django.setup()

import websockets  # noqa: E402
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402

from accounts.models import User  # noqa: E402

OWNER = "bench@example.com"


def session_cookie() -> str:
    user = User.objects.get(email=OWNER)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


async def watch(url: str, origin: str, cookie: str) -> None:
    headers = {"Cookie": f"sessionid={cookie}"}
    counts = {"events": 0, "skipped": 0}
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with websockets.connect(url, origin=origin, additional_headers=headers) as socket:
        hello = json.loads(await socket.recv())
        assert hello["type"] == "hello", hello
        print("watching", flush=True)

        async def count():
            async for raw in socket:
                message = json.loads(raw)
                for event in message.get("events", ()):
                    counts["events"] += 1
                    counts["skipped"] += event.get("skippedBefore", 0)

        counter = asyncio.create_task(count())
        await stop.wait()
        counter.cancel()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    asyncio.run(watch(sys.argv[1], sys.argv[2], session_cookie()))
