"""The per-process mirror of the state a request to /mcp/<slug> checks before it runs, so a warm
call makes no Redis round trip at all.

What it holds, per event loop: a server's definition generation and inspector flag (by slug), a
key's or grant's generation (by stored digest), a session's hash (by id), each with the time
its Redis read was sent. The gate uses an entry only while

- the read behind it was sent at most MCP_STATE_MAX_STALE_SECONDS (1 s) ago, and
- this process's pub/sub subscriber (infra/hub.py) is connected to `keys.state_changes()`.

Otherwise it reads Redis as before (state_read.read_state, one round trip) and keeps what it
read. So the bound holds whatever happens to pub/sub:

- every change of that state is announced on the channel (servers/state_events.py); the
  subscriber drops the entry it names at once, and a change made in this process drops it
  before the call that made it returns;
- a refresher task re-reads, every REFRESH_FRACTION of the bound, in one round trip, every
  entry used since its last pass (and refreshes those sessions' idle expiry: the batched
  replacement of the EXPIRE each request used to send), so a lost announcement is corrected
  within the bound and entries in use never expire on the request path; entries not used for
  a bound are dropped, so the mirror holds only what was used in the last second or so;
- while the subscriber is down, nothing is trusted: every request reads Redis, as before this
  mirror existed; when it reconnects (announcements may have been missed) everything is
  dropped, and so it is when servers.invalidation sees Redis restart or return from an outage.

A hung Redis is noticed the same way: the refresher's read times out, entries age past the
bound, and requests go back to reading Redis (and answer 503 after the socket timeout).
"""

import asyncio
import logging
import time
import weakref
from typing import Any

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra.hub import Hub, hub
from infra.redis import async_client

from .. import invalidation, state_events
from .state_read import State, read_many

log = logging.getLogger(__name__)

REFRESH_FRACTION = 0.4
# Per kind; beyond it new entries are not kept (their requests read Redis, as without a mirror).
MAX_ENTRIES = 50_000


class Entry:
    __slots__ = ("value", "verified", "used")

    def __init__(self, value: Any, verified: float) -> None:
        self.value = value
        self.verified = verified  # time.monotonic() when the read behind it was sent
        self.used = False  # served from memory since the last refresh


class Mirror:
    def __init__(self) -> None:
        self.servers: dict[str, Entry] = {}  # slug -> (generation, watched)
        self.keys: dict[str, Entry] = {}  # stored digest -> generation
        self.sessions: dict[str, Entry] = {}  # sid -> hash ({} when it does not exist)
        self.epoch = 0  # moves on every drop: a read that saw it move keeps nothing
        self.subscribed = False
        self._hub: Hub | None = None
        self._tasks: list[asyncio.Task[None]] = []

    # -- the request path ---------------------------------------------------------------------

    def live(self) -> bool:
        if not self.subscribed:
            if settings.MCP_STATE_MAX_STALE_SECONDS <= 0:
                return False
            self._start()
            return False
        return self._hub is not None and self._hub.connected()

    def lookup(self, slug: str, digest: str | None, sid: str | None) -> State | None:
        """The state from memory, or None when any part of it must be read from Redis."""
        if not self.live():
            return None
        oldest = time.monotonic() - settings.MCP_STATE_MAX_STALE_SECONDS
        server = self.servers.get(slug)
        if server is None or server.verified < oldest:
            return None
        key_generation = None
        if digest is not None:
            key = self.keys.get(digest)
            if key is None or key.verified < oldest:
                return None
            key.used = True
            key_generation = key.value
        session_data = None
        if sid is not None:
            session = self.sessions.get(sid)
            if session is None or session.verified < oldest:
                return None
            session.used = True
            session_data = session.value
        server.used = True
        generation, watched = server.value
        return State(generation, key_generation, session_data, watched)

    async def read(self, redis: Redis, slug: str, digest: str | None, sid: str | None) -> State:
        """Read Redis (one round trip) and keep what was read when nothing changed meanwhile."""
        epoch = self.epoch
        live = self.live()
        sent = time.monotonic()
        found = await read_many(redis, [slug], [digest] if digest else [], [sid] if sid else [])
        if live and epoch == self.epoch and self.live():
            self._keep(self.servers, slug, found.servers[slug], sent)
            if digest:
                self._keep(self.keys, digest, found.keys[digest], sent)
            if sid:
                self._keep(self.sessions, sid, found.sessions[sid], sent)
        generation, watched = found.servers[slug]
        return State(
            generation,
            found.keys[digest] if digest else None,
            found.sessions[sid] if sid else None,
            watched,
        )

    @staticmethod
    def _keep(entries: dict[str, Entry], name: str, value: Any, sent: float) -> None:
        if name in entries or len(entries) < MAX_ENTRIES:
            entries[name] = Entry(value, sent)

    # -- dropping -------------------------------------------------------------------------------

    def forget(self, kind: str, subject: str) -> None:
        self.epoch += 1
        entries = {
            state_events.SERVER: self.servers,
            state_events.KEY: self.keys,
            state_events.SESSION: self.sessions,
        }.get(kind)
        if entries is not None:
            entries.pop(subject, None)

    def clear(self) -> None:
        self.epoch += 1
        self.servers.clear()
        self.keys.clear()
        self.sessions.clear()

    def deliver(self, channel: str, data: bytes | None) -> None:
        """The hub's callback: one announcement, or None after a reconnect (some may be lost)."""
        if data is None:
            self.clear()
            self.subscribed = True
            return
        parsed = state_events.parse(data)
        if parsed is not None:
            self.forget(*parsed)

    # -- background -----------------------------------------------------------------------------

    def _start(self) -> None:
        if self._tasks and not all(task.done() for task in self._tasks):
            return
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._subscribe()), loop.create_task(self._refresh())]

    async def _subscribe(self) -> None:
        found = hub()
        self._hub = found
        await found.listen([rkeys.state_changes()], self.deliver)
        # Held for the life of the loop: the mirror is never without its subscription.
        if found.connected():
            self.subscribed = True

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(settings.MCP_STATE_MAX_STALE_SECONDS * REFRESH_FRACTION)
            try:
                await self.refresh()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis away: entries age out by themselves
                log.info("state mirror: refresh failed (%r); entries will age out", exc)

    async def refresh(self) -> None:
        """Re-read every entry used since the last pass; drop those not used for a bound."""
        oldest = time.monotonic() - settings.MCP_STATE_MAX_STALE_SECONDS
        due: list[tuple[dict[str, Entry], str, Entry]] = []
        for entries in (self.servers, self.keys, self.sessions):
            for name, entry in list(entries.items()):
                if entry.used:
                    entry.used = False
                    due.append((entries, name, entry))
                elif entry.verified < oldest:
                    entries.pop(name, None)
        if not due or not self.live():
            return
        sent = time.monotonic()
        found = await read_many(
            async_client(),
            [name for entries, name, _ in due if entries is self.servers],
            [name for entries, name, _ in due if entries is self.keys],
            [name for entries, name, _ in due if entries is self.sessions],
        )
        if not self.live():
            return
        fresh: dict[int, dict[str, Any]] = {
            id(self.servers): found.servers,
            id(self.keys): found.keys,
            id(self.sessions): found.sessions,
        }
        for entries, name, entry in due:
            # An entry dropped meanwhile (its announcement came) stays dropped.
            if entries.get(name) is entry:
                entry.value = fresh[id(entries)][name]
                entry.verified = sent


_mirrors: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Mirror]" = (
    weakref.WeakKeyDictionary()
)
_last: list[Any] = [None, None]  # (loop, mirror): the one lookup a request makes, without the dict


def mirror() -> Mirror:
    """The running loop's mirror (redis-py's asyncio connections cannot cross loops)."""
    loop = asyncio.get_running_loop()
    if _last[0] is loop:
        mirror_found: Mirror = _last[1]
        return mirror_found
    found = _mirrors.get(loop)
    if found is None:
        found = _mirrors[loop] = Mirror()
    _last[0], _last[1] = loop, found
    return found


def _forget_everywhere(kind: str, subject: str) -> None:
    for found in list(_mirrors.values()):
        found.forget(kind, subject)


def _clear_everywhere() -> None:
    for found in list(_mirrors.values()):
        found.clear()


state_events.on_change(_forget_everywhere)
# Redis restarted or back from an outage: what was read from it proves nothing any more.
invalidation.watch("state-mirror", drop=lambda _subject: None, clear=_clear_everywhere)
