"""Security state that survives any Redis fault: revocations, pauses, deletions and definition
changes reach every process within SECURITY_RECHECK_SECONDS, whether or not Redis saw them.

The fast path is unchanged: a change bumps a generation in Redis after commit and announces it,
and every process's state mirror (gateway/pipeline/mirror.py) sees it at once or within its bound. That bump fails while Redis is down,
and a Redis that returns with old (append-only) data brings old generations back, under which a
process's cached key or snapshot looks current again. So each change is also written to
Postgres, as a `Change` row in the very transaction that made it (`record`), and every process
runs a background thread (`Recheck`) that, every SECURITY_RECHECK_SECONDS:

- reads the rows committed since its last look and drops the cache entries they name (the
  server's snapshots, the key's credential, the organization's decrypted secrets);
- asks Redis for its run_id, and drops every cached entry when Redis restarted or came back
  from an outage (a generation read from a Redis that lost or rewound data proves nothing).

The request path is untouched: no SQL on a warm call. The bound is the period plus one query.

Finding "rows committed since": row ids and times follow the start of the writing transaction,
not its commit, so a reader that remembered the highest id would miss a slow transaction
committing a lower one later. Each row carries its transaction id instead, and the reader keeps
the `xmin` of its last snapshot (every transaction below it had finished by then): the next look
reads the rows of transactions at or above it, skipping those already seen.
"""

import logging
import os
import threading
import time
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import DatabaseError, connections

from infra.redis import is_cluster, is_sentinel, sync_cluster, sync_standalone
from infra.redis_failover import FailoverRetry

log = logging.getLogger(__name__)

_lock = threading.Lock()
_started_in: int | None = None  # the pid that started the thread (a forked child starts its own)
_epoch = 0
# Change kind -> (drop one subject, drop everything) of the cache holding that kind (see watch).
_watched: dict[str, tuple[Callable[[str], None], Callable[[], None]]] = {}


def enabled() -> bool:
    return settings.SECURITY_RECHECK_SECONDS > 0 and connections["default"].vendor == "postgresql"


# -- writing ----------------------------------------------------------------------------------


def record(kind: str, subject: str, using: str = "default") -> None:
    """Write a Change row in the current transaction (call it from the signal of the change)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    from .models import Change

    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Change._meta.db_table} (kind, subject, txid, created_at) "  # noqa: S608
            "VALUES (%s, %s, pg_current_xact_id()::text::bigint, now())",
            [kind, subject[:200]],
        )


def prune(hours: int) -> int:
    """Delete rows older than `hours` (every process has long read them)."""
    from datetime import timedelta

    from django.utils import timezone

    from .models import Change

    deleted, _ = Change.objects.filter(
        created_at__lt=timezone.now() - timedelta(hours=hours)
    ).delete()
    return deleted


# -- dropping ---------------------------------------------------------------------------------


def epoch() -> int:
    """Moves on every drop. A loader that read the database while a drop happened must not
    cache what it read: compare `epoch()` before and after (see `still_current`)."""
    return _epoch


def still_current(seen_epoch: int) -> bool:
    return _epoch == seen_epoch


def watch(kind: str, *, drop: Callable[[str], None], clear: Callable[[], None]) -> None:
    """Subscribe a per-process cache: `drop(subject)` on a change of `kind` (a Change kind),
    `clear()` when every cached entry must go. Each cache subscribes where it is defined
    (servers.snapshot, gateway.pipeline.credentials, vault.resolve), so this module imports none of
    them; a cache whose module was never imported holds nothing to drop."""
    _watched[kind] = (drop, clear)


def drop(kind: str, subject: str) -> None:
    global _epoch
    _epoch += 1
    watched = _watched.get(kind)
    if watched is not None:
        watched[0](subject)


def clear(kind: str) -> None:
    """Drop every entry of one kind's cache (its announcements may have been missed)."""
    global _epoch
    _epoch += 1
    watched = _watched.get(kind)
    if watched is not None:
        watched[1]()


def drop_all(reason: str) -> None:
    global _epoch
    _epoch += 1
    for _drop, clear in list(_watched.values()):
        clear()
    log.info("dropped every cached server, key and secret: %s", reason)


# -- the per-process re-check -----------------------------------------------------------------

SINCE = """
SELECT snap.xmin, c.id, c.kind, c.subject, c.txid
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin) AS snap
LEFT JOIN {table} AS c ON c.txid >= %s
"""


class Recheck:
    def __init__(self) -> None:
        self.low: int | None = None  # the xmin of the last look
        self.seen: dict[int, int] = {}  # row id -> txid, for rows at or above `low`
        self.run_id: str | None = None
        self.redis_lost = False
        self.db_failing = False
        self._redis = None

    def look(self) -> int:
        """Read the change rows committed since the last look and drop what they name; returns
        how many were new. The first look only sets the starting point (nothing is cached yet)."""
        from .models import Change

        connection = connections["default"]
        with connection.cursor() as cursor:
            cursor.execute(SINCE.format(table=Change._meta.db_table), [self.low or 0])
            rows = cursor.fetchall()
        first = self.low is None
        new = 0
        for _xmin, row_id, kind, subject, txid in rows:
            if row_id is None or row_id in self.seen:
                continue
            self.seen[row_id] = txid
            if not first:
                drop(kind, subject)
                new += 1
        self.low = rows[0][0]
        self.seen = {row_id: txid for row_id, txid in self.seen.items() if txid >= self.low}
        return new

    def redis_client(self):
        if self._redis is None:
            timeout = min(1.0, max(settings.SECURITY_RECHECK_SECONDS, 0.2))
            deadlines = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
            if is_cluster():
                self._redis = sync_cluster(**deadlines)
            elif is_sentinel():
                # Waiting out a whole failover (REDIS_SENTINEL_FAILOVER_SECONDS) here would hold
                # back the change log's next look, in this same thread; a failed watch only
                # marks Redis lost, and every cache is dropped when it answers again.
                self._redis = sync_standalone(**deadlines, retry=FailoverRetry(timeout))
            else:
                self._redis = sync_standalone(**deadlines)
        return self._redis

    def _run_id(self) -> str | None:
        """The server's run id; on a cluster every master's, joined: a master replaced by its
        replica (a failover, which may lose the writes it had not replicated) counts as a
        restart, so every cache is dropped and re-read from Postgres."""
        client = self.redis_client()
        if not is_cluster():
            return client.info("server").get("run_id")
        found = client.info("server", target_nodes=client.PRIMARIES)
        return ",".join(sorted(str(info.get("run_id")) for info in found.values()))

    def watch_redis(self) -> None:
        """Drop everything when Redis restarted (new run_id) or answers again after failing."""
        if not settings.REDIS_URL:
            return
        try:
            run_id = self._run_id()
        except redis.ResponseError:  # INFO disabled on some managed Redis: outages still count
            run_id = self.run_id
        except redis.RedisError:
            if not self.redis_lost:
                log.warning("Redis unreachable; caches will be dropped when it returns")
            self.redis_lost = True
            return
        if self.redis_lost:
            drop_all("Redis answers again")
        elif self.run_id is not None and run_id != self.run_id:
            drop_all("Redis restarted")
        self.redis_lost = False
        self.run_id = run_id

    def tick(self) -> None:
        from .db import recycle_connections

        try:
            recycle_connections()
            self.look()
            if self.db_failing:
                log.info("change log readable again")
            self.db_failing = False
        except DatabaseError:
            if not self.db_failing:
                log.warning("cannot read the change log; retrying", exc_info=True)
            self.db_failing = True
        self.watch_redis()

    def run_forever(self) -> None:
        while True:
            started = time.monotonic()
            try:
                self.tick()
            except Exception:
                log.exception("security re-check failed")
            time.sleep(max(0.0, settings.SECURITY_RECHECK_SECONDS - (time.monotonic() - started)))


def ensure_started() -> None:
    """Start this process's re-check (once per process); called by every loader before it
    fills a cache, so nothing is cached in a process that does not watch for changes. The first
    look runs here, synchronously, so it happens before the load it guards."""
    global _started_in
    if _started_in == os.getpid() or not enabled():
        return
    with _lock:
        if _started_in == os.getpid():
            return
        recheck = Recheck()
        recheck.look()
        recheck.watch_redis()
        threading.Thread(target=recheck.run_forever, name="security-recheck", daemon=True).start()
        _started_in = os.getpid()
