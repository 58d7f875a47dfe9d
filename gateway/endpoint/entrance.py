"""The entrance of a POST to /mcp/<slug>, after the pipeline's admission (app.py): what the body
carries and which protocol era it belongs to are decided here, once; then the pipeline's
per-message stages (scopes, quotas); then the era's transport frames the exchange."""

from collections.abc import Awaitable, Callable
from typing import Any

from observability import tracing

from . import inbound, stateless_post, streamable
from .gate import Gate
from .http import Send

# Each era's transport: the session era's streams and sessions, the stateless era's envelope.
ERAS: dict[inbound.Era, Callable[[Gate, Send, Any], Awaitable[None]]] = {
    "session": streamable.session_post,
    "stateless": stateless_post.handle,
}


async def post(gate: Gate, send: Send) -> None:
    arrived = await inbound.read(gate.request, gate.session_id)
    tracing.begin(gate, arrived.message)
    await gate.admit_calls(arrived.message)
    await ERAS[arrived.era](gate, send, arrived.message)
