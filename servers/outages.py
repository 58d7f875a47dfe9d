"""What counts as an outage of a backing service, and the one answer every surface gives it.

The MCP endpoint, the management API and the dashboard all meet the same failures when Redis or
Postgres is down, hung or restarting; they answer 503 with Retry-After (JSON under /mcp/ and
/api/, a plain page on the dashboard) rather than a 500 and a traceback in the log.
"""

import logging

from django.db import DatabaseError, InterfaceError, OperationalError

from infra.redis import UNAVAILABLE as REDIS_UNAVAILABLE

RETRY_AFTER_SECONDS = 5
log = logging.getLogger(__name__)


class DatabaseUnavailable(Exception):
    """A database call on the MCP path did not finish within MCP_DATABASE_TIMEOUT_SECONDS."""


def outage_of(exc: BaseException) -> str | None:
    """'state store' or 'database' when `exc` means that service is unreachable, else None."""
    if isinstance(exc, REDIS_UNAVAILABLE):
        return "state store"
    if isinstance(exc, DatabaseUnavailable | OperationalError | InterfaceError):
        return "database"
    if isinstance(exc, DatabaseError) and "statement timeout" in str(exc):
        return "database"
    return None


def outage_message(service: str) -> str:
    return f"Service temporarily unavailable ({service}); retry in a few seconds"


def best_effort(fn, *args, **kwargs):
    """Call `fn` (a Redis side effect of a change already made durable elsewhere, e.g. a
    generation bump); when Redis is unreachable, log it and go on: the change itself must not
    fail, and servers.invalidation makes every process see it once Redis is back."""
    try:
        return fn(*args, **kwargs)
    except REDIS_UNAVAILABLE as exc:
        log.warning("Redis unavailable, skipped %s: %s", getattr(fn, "__name__", fn), exc)
        return None
