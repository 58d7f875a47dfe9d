"""Stage 5, dispatch: a method's handler is the core method wrapped in the layers that apply
to it, composed once when the method tables are built (gateway/endpoint/dispatch.py), never
decided inside the core.

In: a call (the era's own: `SessionCall` or `StatelessCall`; both carry the request, the
context the tool sees, and the server as the caller sees it). Out: the method's result.

A layer is `async layer(call, inner) -> result`: it answers the call itself (a discovery
meta-tool, a task, a kept result's page), or hands it on to `inner` and may change what comes
back (an output budget). Layers, outermost first, for tools/call: tasks, MRTR (stateless era),
discovery and long calls (gateway/agents), output budgets, then the core method."""

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcp_protocol.context import RequestContext
from mcp_protocol.jsonrpc import Request
from servers import methods
from servers.snapshot import Snapshot


class Call(Protocol):
    @property
    def request(self) -> Request: ...

    @property
    def context(self) -> RequestContext: ...

    @property
    def snapshot(self) -> Snapshot: ...


Result = dict[str, Any]
Handler = Callable[[Any], Awaitable[Result]]
Layer = Callable[[Any, Handler], Awaitable[Result]]


async def core(call: Call) -> Result:
    """The core method every server implements on its snapshot (servers/methods.py), which
    hands a tools/call to its tool kind."""
    request = call.request
    result: Result = await methods.call_method(
        call.snapshot, request.method, request.params, call.context
    )
    return result


def layered(handler: Handler, *layers: Layer) -> Handler:
    """`handler` inside `layers`, the first one outermost."""
    for layer in reversed(layers):
        handler = _wrap(layer, handler)
    return handler


def _wrap(layer: Layer, inner: Handler) -> Handler:
    async def wrapped(call: Any) -> Result:
        return await layer(call, inner)

    wrapped.__qualname__ = (
        f"{getattr(layer, '__qualname__', 'layer')}>{getattr(inner, '__qualname__', 'core')}"
    )
    return wrapped
