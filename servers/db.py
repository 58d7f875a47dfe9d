"""ORM work on the MCP path, handled the way Django's request cycle handles it.

The /mcp/ endpoint is plain ASGI, not a Django request, so nothing recycled its database
connections: after a Postgres restart the thread's connection stayed broken and every call
failed until the process restarted. `run()` does what Django does around a request
(close_old_connections): a connection that saw an error, or whose CONN_MAX_AGE passed, is
closed, and with CONN_HEALTH_CHECKS the first use after that pings it and reconnects if needed.
That costs nothing on a warm call (which runs no SQL) and one round trip on a cold one.

The call is also bounded: a frozen Postgres answers nothing and fires no server-side timeout, so
the endpoint stops waiting after MCP_DATABASE_TIMEOUT_SECONDS and answers a clean error.
"""

import asyncio
import functools

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from .outages import DatabaseUnavailable


def recycle_connections() -> None:
    """Django's close_old_connections, except inside a transaction (never cut one short)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


def healthy(fn):
    """`fn`, run on a recycled connection: for sync code called from the MCP path."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        recycle_connections()
        return fn(*args, **kwargs)

    return wrapper


async def run(fn, *args, **kwargs):
    """`await run(fn, ...)`: fn in Django's sync thread on a healthy connection, bounded."""
    call = sync_to_async(healthy(fn))(*args, **kwargs)
    try:
        return await asyncio.wait_for(call, settings.MCP_DATABASE_TIMEOUT_SECONDS)
    except TimeoutError:
        raise DatabaseUnavailable("the database did not answer in time") from None
