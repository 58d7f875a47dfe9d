"""A web process keeps no Postgres connection per Django request (getmcp/asgi.py): a live
uvicorn serving many requests that read the database holds a handful of connections, not one
a request. Counted from the process's own sockets (/proc), whatever else uses the database."""

import os
from pathlib import Path

import httpx2
import pytest
from django.conf import settings

from tests.conftest import LiveServer

POSTGRES_PORT = 5432


def postgres_connections(pid: int) -> int:
    """Established TCP connections of process `pid` to the Postgres port (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except FileNotFoundError:  # closed between the listing and the read: not held
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            established = fields[3] == "01"
            if established and remote_port == POSTGRES_PORT and fields[9] in inodes:
                count += 1
    return count


@pytest.mark.django_db(transaction=True)
def test_a_web_process_holds_no_connection_per_django_request(live_database):
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("needs Postgres")
    server = LiveServer(live_database)
    try:
        with httpx2.Client(base_url=server.url, timeout=30) as client:
            for _ in range(40):  # each looks its token up in Postgres, in a thread of its own
                answer = client.get(
                    "/api/servers/", headers={"Authorization": "Token gpat_" + "x" * 40}
                )
                assert answer.status_code == 401
        assert postgres_connections(server.process.pid) <= 3
    finally:
        server.stop()
