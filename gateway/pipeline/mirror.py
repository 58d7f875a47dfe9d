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
- a refresher task re-reads, every REFRESH_FRACTION of the bound, every server and key used
  in the last MCP_STATE_KEEP_SECONDS (in batched Lua reads of CHUNK entries, one round trip
  each) and every session used since its last pass (refreshing those sessions' idle expiry:
  the batched replacement of the EXPIRE each request used to send), so a lost announcement is
  corrected within the bound and a server or key used in the last few minutes is found fresh
  by its next call, however rarely each is called (10,000 servers round robin: each every few
  seconds); sessions not used for a bound and servers and keys not used for the keep window
  are dropped, and each kind is an LRU of at most MCP_STATE_MIRROR_SIZE entries;
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
from collections import OrderedDict
from typing import Any

from django.conf import settings
from redis.asyncio import Redis

from infra import keys as rkeys
from infra.hub import Hub, hub
from infra.redis import async_client
from servers import invalidation, state_events

from .state_read import State, read_kept, read_many

log = logging.getLogger(__name__)

REFRESH_FRACTION = 0.4
# Servers (or keys) per refresher read: each a short Lua call, so Redis serves other clients
# between them instead of stalling for one read of every entry.
CHUNK = 2_000


class Entry:
    __slots__ = ("value", "verified", "used")

    def __init__(self, value: Any, verified: float) -> None:
        self.value = value
        self.verified = verified  # time.monotonic() when the read behind it was sent
        self.used = verified  # time.monotonic() of its last use (its read's, at first)


Entries = OrderedDict[str, Entry]  # least recently used first


class Mirror:
    def __init__(self) -> None:
        self.servers: Entries = OrderedDict()  # slug -> (generation, watched)
        self.keys: Entries = OrderedDict()  # stored digest -> generation
        self.sessions: Entries = OrderedDict()  # sid -> hash ({} when it does not exist)
        self.epoch = 0  # moves on every drop: a read that saw it move keeps nothing
        self.subscribed = False
        self._hub: Hub | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._last_pass = 0.0  # when the refresher's last pass began
        self._kept = 0  # moves whenever an entry is put in (or evicted)

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
        now = time.monotonic()
        oldest = now - settings.MCP_STATE_MAX_STALE_SECONDS
        server = self.servers.get(slug)
        if server is None or server.verified < oldest:
            return None
        key_generation = None
        if digest is not None:
            key = self.keys.get(digest)
            if key is None or key.verified < oldest:
                return None
            key.used = now
            self.keys.move_to_end(digest)
            key_generation = key.value
        session_data = None
        if sid is not None:
            session = self.sessions.get(sid)
            if session is None or session.verified < oldest:
                return None
            session.used = now
            self.sessions.move_to_end(sid)
            session_data = session.value
        server.used = now
        self.servers.move_to_end(slug)
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

    def _keep(self, entries: Entries, name: str, value: Any, sent: float) -> None:
        # A new Entry, not the old one updated: a refresher read in flight (sent before this
        # one) sees its entry replaced and keeps nothing.
        self._kept += 1
        entries[name] = Entry(value, sent)
        entries.move_to_end(name)
        while len(entries) > settings.MCP_STATE_MIRROR_SIZE:
            entries.popitem(last=False)  # the least recently used

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
        elif kind == state_events.CONNECTION:
            # Not mirrored state: the connection tokens' per-process cache (connections.token_cache).
            invalidation.drop("conn", subject)  # Change.CONNECTION

    def clear(self) -> None:
        self.epoch += 1
        self.servers.clear()
        self.keys.clear()
        self.sessions.clear()

    def deliver(self, channel: str, data: bytes | None) -> None:
        """The hub's callback: one announcement, or None after a reconnect (some may be lost)."""
        if data is None:
            self.clear()
            invalidation.clear("conn")  # connection changes announced meanwhile are lost
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
        """Re-read every server and key used in the keep window and every session used since
        the last pass; drop the rest (sessions once their entry is older than a bound)."""
        now = time.monotonic()
        oldest = now - settings.MCP_STATE_MAX_STALE_SECONDS
        since, self._last_pass = self._last_pass, now
        kept_after = now - max(
            settings.MCP_STATE_KEEP_SECONDS, settings.MCP_STATE_MAX_STALE_SECONDS
        )
        for entries in (self.servers, self.keys):
            while entries:  # least recently used first: stop at the first one still wanted
                name, entry = next(iter(entries.items()))
                if entry.used >= kept_after:
                    break
                del entries[name]
        sessions: list[tuple[str, Entry]] = []
        for name, entry in list(self.sessions.items()):
            if entry.used >= since:
                sessions.append((name, entry))
            elif entry.verified < oldest:
                self.sessions.pop(name, None)
        if not self.live():
            return
        redis = async_client()
        if sessions:
            await self._refresh_sessions(redis, sessions)
        # Names and entries as flat lists (snapshots: requests change the dicts meanwhile), not
        # one (name, entry) tuple each: see state_read.read_kept on the garbage collector.
        servers, keys = list(self.servers), list(self.keys)
        server_entries, key_entries = list(self.servers.values()), list(self.keys.values())
        for at in range(0, max(len(servers), len(keys)), CHUNK):
            end = at + CHUNK
            await self._refresh_chunk(
                redis, servers[at:end], server_entries[at:end], keys[at:end], key_entries[at:end]
            )

    async def _refresh_sessions(self, redis: Redis, due: list[tuple[str, Entry]]) -> None:
        sent = time.monotonic()
        found = await read_many(redis, [], [], [name for name, _ in due])
        if not self.live():
            return
        for name, entry in due:
            # An entry dropped meanwhile (its announcement came) stays dropped.
            if self.sessions.get(name) is entry:
                entry.value = found.sessions[name]
                entry.verified = sent

    async def _refresh_chunk(
        self,
        redis: Redis,
        servers: list[str],
        server_entries: list[Entry],
        keys: list[str],
        key_entries: list[Entry],
    ) -> None:
        sent = time.monotonic()
        before = (self.epoch, self._kept)
        generations, flags, key_generations = await read_kept(redis, servers, keys)
        if not self.live():
            return
        # An entry dropped or replaced meanwhile (its announcement came, or a request read it
        # after this read was sent) stays as it is; when nothing was (the usual case), the
        # entries read are still the ones in the mirror. A value is replaced only when it changed.
        unchanged = before == (self.epoch, self._kept)
        found = self.servers.get
        for name, entry, generation, watched in zip(
            servers, server_entries, generations, flags, strict=True
        ):
            if unchanged or found(name) is entry:
                if entry.value[0] != generation or entry.value[1] is not watched:
                    entry.value = (generation, watched)
                entry.verified = sent
        found = self.keys.get
        for name, entry, key_generation in zip(keys, key_entries, key_generations, strict=True):
            if unchanged or found(name) is entry:
                entry.value = key_generation
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
