"""The live inspector's WebSocket: one socket per open inspector page, at /ws/inspector/<slug>/.

Who may connect is decided as for the server's pages: the dashboard session's user must be a
member of the server's organization with a role that may VIEW it (accounts.policy); for anyone
else the handshake is refused (HTTP 403) before joining anything, exactly as for a slug with no
server, so nobody learns whether a server exists; and checked again every REFRESH_SECONDS while
the socket is open (a removed member or a sign-out stops watching within seconds). The
socket keeps the server's watch flag alive (inspector/watch.py) so the hot path publishes, listens
to the server's events channel through the process's one Redis subscriber (infra/hub.py; every
web process publishes there, one message per batch) and forwards each batch as it was published;
for a call that became a task it relays the task's progress and status (mcptasks/events.py) too.
Events do not ride the Channels layer: a batch is published once, already encoded, and sent on
as it is, with no per-message envelope, per-consumer queue or polling reader in between.

One dashboard session holds at most INSPECTOR_SOCKETS_PER_SESSION sockets at once, counted
across processes in Redis (inspector/sockets.py): one more is told so and closed (4429).

Client messages: {"type": "pause"} / {"type": "resume"} (a paused socket drops events and
keeps no backlog; the page says so).
"""

import asyncio
import contextlib
import logging

import orjson
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from accounts import policy
from accounts.models import User
from infra import keys as rkeys
from infra.hub import hub, next_message
from infra.hub import subscribe as subscribe_channels
from infra.redis import async_client
from servers.models import Server

from .sockets import Lease
from .watch import REFRESH_SECONDS, events_channel, keep_alive

log = logging.getLogger(__name__)

CLOSE_REFUSED = 4403
CLOSE_TOO_MANY = 4429  # the session has INSPECTOR_SOCKETS_PER_SESSION sockets open already
CLOSE_TRY_AGAIN = 1013
# At most this many tasks relayed at once per socket, each for at most TASK_RELAY_SECONDS.
MAX_TASK_RELAYS = 8
TASK_RELAY_SECONDS = 600
# Batches waiting to be sent to one slow page; beyond this they are dropped (a person cannot
# read them anyway, and the process must not hold them).
MAX_PENDING = 100


@database_sync_to_async
def _server_for(user, slug: str):
    """The server when `user` may view it, else None (not found and not allowed look alike)."""
    if user is None or not user.is_authenticated:
        return None
    server = Server.objects.select_related("organization").filter(slug=slug).first()
    if server is None:
        return None
    if not policy.can(user=user, org=server.organization, action=policy.Action.VIEW):
        return None
    return {"id": server.pk, "slug": server.slug}


@database_sync_to_async
def _still_allowed(scope, server: dict) -> bool:
    """Whether the socket's person may still watch, as a page request would find it now: the
    session still exists (not signed out), the user is still active and still a member whose
    role may view the server."""
    session = scope.get("session")
    if session is None or not session.session_key or not session.exists(session.session_key):
        return False
    user = User.objects.filter(pk=getattr(scope.get("user"), "pk", None), is_active=True).first()
    if user is None:
        return False
    found = Server.objects.select_related("organization").filter(pk=server["id"]).first()
    return (
        found is not None
        and found.slug == server["slug"]
        and policy.can(user=user, org=found.organization, action=policy.Action.VIEW)
    )


class InspectorConsumer(AsyncWebsocketConsumer):
    lease: Lease | None = None

    async def connect(self):
        slug = self.scope["url_route"]["kwargs"]["slug"]
        server = await _server_for(self.scope.get("user"), slug)
        if server is None:
            await self.close(code=CLOSE_REFUSED)
            return
        if not await self._take_lease():
            return
        self.server = server
        self.paused = False
        self.relays: dict[str, asyncio.Task] = {}
        self.pending: asyncio.Queue[bytes] = asyncio.Queue(MAX_PENDING)
        self.subscription = await hub().listen([events_channel(server["id"])], self._deliver)
        # Removed from (or deactivated in) an organization: check the person again at once
        # (accounts/deprovision.py publishes it), not only every REFRESH_SECONDS.
        self.recheck = asyncio.Event()
        self.person = await hub().listen(
            [rkeys.person_changed(self.scope["user"].pk)], self._person_changed
        )
        await self.accept()
        await keep_alive(async_client(), server["slug"])
        self.heartbeat = asyncio.create_task(self._keep_watching())
        self.forwarder = asyncio.create_task(self._forward())
        await self.send_json({"type": "hello", "server": server["slug"]})

    async def _take_lease(self) -> bool:
        """A place among the session's open sockets (inspector/sockets.py); over the cap the
        socket is accepted only to say so, then closed: a refused handshake would look like a
        sign-out to the page."""
        lease = Lease(self.scope["session"].session_key)
        try:
            taken = await lease.take(async_client())
        except Exception:
            log.warning("live inspector: could not count the session's sockets", exc_info=True)
            await self.close(code=CLOSE_TRY_AGAIN)
            return False
        if not taken:
            limit = settings.INSPECTOR_SOCKETS_PER_SESSION
            await self.accept()
            await self.send_json({"type": "refused", "reason": "too_many_sockets", "limit": limit})
            await self.close(code=CLOSE_TOO_MANY)
            return False
        self.lease = lease
        return True

    async def disconnect(self, code):
        if self.lease is not None:
            lease, self.lease = self.lease, None
            try:
                await lease.release(async_client())
            except Exception:  # Redis away: the lease runs out by itself
                log.warning("live inspector: could not release a socket's place", exc_info=True)
        if not hasattr(self, "subscription"):
            return
        self.heartbeat.cancel()
        self.forwarder.cancel()
        for relay in self.relays.values():
            relay.cancel()
        await self.subscription.close()
        await self.person.close()

    def _person_changed(self, channel: str, data: bytes | None) -> None:
        if data is not None:
            self.recheck.set()

    async def receive(self, text_data=None, bytes_data=None):
        try:
            message = orjson.loads(text_data or b"{}")
        except orjson.JSONDecodeError:
            return
        if not isinstance(message, dict):
            return
        if message.get("type") == "pause":
            self.paused = True
        elif message.get("type") == "resume":
            self.paused = False

    def _deliver(self, channel: str, data: bytes | None) -> None:
        """From the hub, in this loop: a batch as published (None: the hub reconnected; the
        events published meanwhile are lost, which a live view may afford)."""
        if data is None or self.paused:
            return
        with contextlib.suppress(asyncio.QueueFull):
            self.pending.put_nowait(data)

    async def _forward(self) -> None:
        """Sends each batch on to the page as published (publish.message_of), then follows
        the calls that became tasks."""
        while True:
            data = await self.pending.get()
            try:
                await self.send(text_data=data.decode())
                for event in orjson.loads(data).get("events", ()):
                    task_id = event.get("taskId")
                    if (
                        task_id
                        and task_id not in self.relays
                        and len(self.relays) < MAX_TASK_RELAYS
                    ):
                        self.relays[task_id] = asyncio.create_task(self._relay_task(task_id))
            except Exception:
                log.warning("live inspector: could not forward a batch", exc_info=True)

    async def send_json(self, payload) -> None:
        await self.send(text_data=orjson.dumps(payload).decode())

    async def _keep_watching(self):
        """Every REFRESH_SECONDS: the person is checked again (a removed member, a lowered
        role, a sign-out or a deleted server closes the socket within that time, as the pages
        would refuse the next request; a person's removal, announced on their channel, at
        once) and the watch flag refreshed."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.recheck.wait(), REFRESH_SECONDS)
            self.recheck.clear()
            try:
                allowed = await _still_allowed(self.scope, self.server)
            except Exception:
                log.warning("live inspector: could not check the watcher again", exc_info=True)
                continue  # the database away for a moment: keep the socket, check next time
            if not allowed:
                await self.close(code=CLOSE_REFUSED)
                return
            try:
                await keep_alive(async_client(), self.server["slug"])
                if self.lease is not None:
                    await self.lease.renew(async_client())
            except Exception:
                log.warning("live inspector: could not refresh the watch flag", exc_info=True)

    async def _relay_task(self, task_id: str) -> None:
        """The task's progress and status as they happen, until it ends (or a bound)."""
        from mcptasks.events import CORE_ERA, events_channel

        pubsub = async_client().pubsub()
        try:
            await subscribe_channels(pubsub, events_channel(task_id))
            async with asyncio.timeout(TASK_RELAY_SECONDS):
                while True:
                    message = await next_message(pubsub, timeout=5)
                    if message is None or message["type"] != "message":
                        continue
                    data = orjson.loads(message["data"])
                    update = {"type": "task", "taskId": task_id, "kind": data.get("type")}
                    if data.get("type") == "progress":
                        update.update(
                            progress=data.get("progress"),
                            total=data.get("total"),
                            message=data.get("message"),
                        )
                    elif data.get("type") == "status":
                        params = (data.get("notifications") or {}).get(CORE_ERA, {}).get("params")
                        params = params or {}
                        update.update(
                            status=params.get("status"), message=params.get("statusMessage")
                        )
                    else:
                        continue
                    if not self.paused:
                        await self.send_json(update)
                    if update.get("status") in ("completed", "failed", "cancelled"):
                        return
        except (TimeoutError, asyncio.CancelledError):
            pass
        except Exception:
            log.warning("live inspector: task relay stopped", exc_info=True)
        finally:
            self.relays.pop(task_id, None)
            with contextlib.suppress(Exception):
                await pubsub.aclose()
