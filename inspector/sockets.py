"""At most INSPECTOR_SOCKETS_PER_SESSION open inspector sockets per dashboard session.

Each socket holds a lease: a member of the session's sorted set in Redis (keyed by a digest of
the session key, never the key itself), scored by the time the lease ends. The consumer renews
it on every check of its watcher (REFRESH_SECONDS) and removes it on disconnect; a process that
dies without disconnecting leaves leases that simply run out after LEASE_SECONDS, so a crash
never locks a person out for longer than that. Counted in Redis, the cap holds across every web
process.

Taking a lease is one transaction (drop the lapsed leases, add this one, count): when the count
passes the cap the lease is removed again and the socket refused. Two sockets racing for the
last place may both be refused, never both admitted. No Lua, so embedded mode (fakeredis) counts
the same way.
"""

import hashlib
import time
import uuid

from django.conf import settings

from infra import keys

from .watch import REFRESH_SECONDS

LEASE_SECONDS = 3 * REFRESH_SECONDS


def session_digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()


class Lease:
    """One socket's place among its session's open sockets."""

    def __init__(self, session_key: str) -> None:
        self.key = keys.inspector_sockets(session_digest(session_key))
        self.member = uuid.uuid4().hex

    async def take(self, redis) -> bool:
        """True when the socket may open (its lease is held), False over the cap."""
        now = time.time()
        pipe = redis.pipeline(transaction=True)
        pipe.zremrangebyscore(self.key, "-inf", now)
        pipe.zadd(self.key, {self.member: now + LEASE_SECONDS})
        pipe.zcard(self.key)
        pipe.expire(self.key, LEASE_SECONDS + 1)
        _, _, count, _ = await pipe.execute()
        if count > settings.INSPECTOR_SOCKETS_PER_SESSION:
            await redis.zrem(self.key, self.member)
            return False
        return True

    async def renew(self, redis) -> None:
        now = time.time()
        pipe = redis.pipeline(transaction=True)
        pipe.zadd(self.key, {self.member: now + LEASE_SECONDS})
        pipe.expire(self.key, LEASE_SECONDS + 1)
        await pipe.execute()

    async def release(self, redis) -> None:
        await redis.zrem(self.key, self.member)
