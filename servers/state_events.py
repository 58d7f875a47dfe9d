"""Announcing a change of the state each web process mirrors for the hot path.

A warm request to /mcp/<slug> reads no Redis: the server's generation and inspector flag, the
key's generation and the session live in a per-process mirror (gateway/pipeline/mirror.py),
trusted for at most MCP_STATE_MAX_STALE_SECONDS. Whoever changes one of them in Redis announces
it here, right after the change: a PUBLISH on `keys.state_changes()`, which every process's one
subscriber (infra/hub.py) hands to its mirror, and a drop in this very process's mirrors, so a
change made here is seen by the next request here whatever the pub/sub timing.

A lost announcement (the subscriber reconnecting, Redis failing between the change and the
PUBLISH) costs at most the mirror's bound: it re-reads what it serves at least that often.

Messages are `<kind>:<subject>`: SERVER (a slug whose generation moved or whose inspector opened),
KEY (the stored digest of a key or grant whose generation moved), SESSION (a session id ended
or changed), CONNECTION (an organization whose connection tokens every process must drop).
"""

from collections.abc import Callable

from infra import keys as rkeys
from infra.redis import publish as publish_on
from infra.redis import sync_client

from .outages import REDIS_UNAVAILABLE, best_effort

SERVER = "s"
KEY = "k"
SESSION = "x"
CONNECTION = "c"  # an organization whose connections or providers changed
KINDS = (SERVER, KEY, SESSION, CONNECTION)

# The mirrors of this process (registered by gateway.pipeline.mirror): forget(kind, subject).
_local: list[Callable[[str, str], None]] = []


def on_change(forget: Callable[[str, str], None]) -> None:
    """Register a per-process mirror: `forget(kind, subject)` on every change made here."""
    if forget not in _local:
        _local.append(forget)


def message(kind: str, subject: str) -> bytes:
    return f"{kind}:{subject}".encode()


def parse(data: bytes) -> tuple[str, str] | None:
    kind, sep, subject = data.decode(errors="replace").partition(":")
    if not sep or kind not in KINDS:
        return None
    return kind, subject


def forget_locally(kind: str, subject: str) -> None:
    for forget in _local:
        forget(kind, subject)


def publish(pipe, kind: str, subject: str) -> None:
    """Queue the announcement on a pipeline (sync or async), after the change it announces."""
    publish_on(pipe, rkeys.state_changes(), message(kind, subject))


def bump(generation_key: str, kind: str, subject: str) -> None:
    """INCR a generation and announce it, in one pipeline (the PUBLISH follows the INCR on one
    connection, so whoever hears it reads the new value); best effort, like every bump."""

    def send() -> None:
        pipe = sync_client().pipeline(transaction=False)
        pipe.incr(generation_key)
        publish(pipe, kind, subject)
        # A refused PUBLISH (an ACL) must not undo the bump: the mirrors' bound covers it.
        pipe.execute(raise_on_error=False)

    try:
        best_effort(send)
    finally:
        forget_locally(kind, subject)


async def announce_async(redis, kind: str, subject: str) -> None:
    """`announce` from async code, on its async client."""
    try:
        await publish_on(redis, rkeys.state_changes(), message(kind, subject))
    except REDIS_UNAVAILABLE:
        pass  # the mirrors' bound covers a lost announcement
    finally:
        forget_locally(kind, subject)


def announce(kind: str, subject: str) -> None:
    """A change already made in Redis (e.g. an inspector flag set): tell every process."""
    try:
        best_effort(sync_client().publish, rkeys.state_changes(), message(kind, subject))
    finally:
        forget_locally(kind, subject)
