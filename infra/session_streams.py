"""Appending an event to one of a session's streams: the one way every writer does it.

The event goes into the session's Redis Stream (durable: a client resumes from it with
Last-Event-ID on any process), and a wake-up is published on the session's channel so the
process holding the client's stream reads it at once (infra/hub.py). Both are queued on the
caller's pipeline: no extra round trip.
"""

from . import keys
from .redis import publish


def append(pipe, sid: str, stream: str, fields: dict, *, maxlen: int, ttl_seconds: int) -> None:
    key = keys.session_stream(sid, stream)
    pipe.xadd(key, fields, maxlen=maxlen, approximate=True)
    pipe.expire(key, ttl_seconds)
    publish(pipe, keys.session_wake(sid), stream)
