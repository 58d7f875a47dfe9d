"""The entrance of a POST to /mcp/<slug>, after the pipeline's admission (app.py): what the body
carries, which protocol era it belongs to and what it does there are decided here, once
(inbound.py); then the pipeline's per-message stages (scopes, quotas); then the transport that
frames that exchange."""

from collections.abc import Awaitable, Callable
from typing import Any

from observability import tracing

from . import inbound, session_post, stateless_post, streamable
from .gate import Gate
from .http import Send

# The transport of each era and kind of POST.
TRANSPORTS: dict[tuple[inbound.Era, inbound.Kind], Callable[[Gate, Send, Any], Awaitable[None]]] = {
    ("session", "initialize"): streamable.initialize_post,
    ("session", "request"): session_post.request_post,
    ("session", "batch"): session_post.batch_post,
    ("session", "notice"): session_post.notice_post,
    ("stateless", "listen"): stateless_post.listen_post,
    # The stateless era takes one request per POST: the transport refuses a batch itself.
    ("stateless", "request"): stateless_post.handle,
    ("stateless", "batch"): stateless_post.handle,
    ("stateless", "notice"): stateless_post.handle,
}


async def post(gate: Gate, send: Send) -> None:
    arrived = await inbound.read(gate.request, gate.session_id)
    tracing.begin(gate, arrived.message)
    await gate.admit_calls(arrived.message)
    await TRANSPORTS[arrived.era, arrived.kind](gate, send, arrived.message)
