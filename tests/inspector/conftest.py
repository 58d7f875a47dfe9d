import asyncio
import time
from contextlib import asynccontextmanager

import orjson
import pytest
import websockets
from django.test import Client

from tests.gateway.endpoint.conftest import outsider_tenant, tenant  # noqa: F401


class Watch:
    """An open inspector socket on a live server, as the page holds it."""

    def __init__(self, socket):
        self.socket = socket
        self.seen: list[dict] = []

    async def message(self, timeout: float = 5.0) -> dict:
        return orjson.loads(await asyncio.wait_for(self.socket.recv(), timeout))

    async def event(self, predicate=lambda event: True, timeout: float = 5.0) -> dict:
        """The first request event (in order of arrival) that `predicate` accepts."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.seen:
                if predicate(event):
                    self.seen.remove(event)
                    return event
            message = await self.message(max(deadline - time.monotonic(), 0.01))
            if message.get("type") == "requests":
                self.seen.extend(message["events"])


@asynccontextmanager
async def watching(server, slug: str, cookie: str):
    """The inspector of `slug` open on the live `server` with the dashboard session `cookie`."""
    url = server.url.replace("http://", "ws://") + f"/ws/inspector/{slug}/"
    async with websockets.connect(
        url, origin=server.url, additional_headers={"Cookie": f"sessionid={cookie}"}
    ) as socket:
        watch = Watch(socket)
        assert (await watch.message())["type"] == "hello"
        yield watch


@pytest.fixture
def session_of(committed):
    """A dashboard session cookie for a user (committed: the live server reads it)."""

    def make(user) -> str:
        client = Client()
        client.force_login(user)
        return client.cookies["sessionid"].value

    return lambda user: committed(make, user)


@pytest.fixture
def owner_cookie(tenant, session_of) -> str:  # noqa: F811
    """The dashboard session of the tenant's owner."""
    return session_of(tenant.user)
