"""The one wrapper around each request of the MCP endpoint (gateway/endpoint/app.py).

It reads what the response says (its status, and whether it is an event stream) as it is sent:
the HTTP status class is counted when the request ends, an SSE stream is counted open from its
first byte until the handler returns, and the request's span (if tracing began one) ends here.
"""

from . import metrics, tracing

_EVENT_STREAM = b"text/event-stream"


def _is_event_stream(headers) -> bool:
    for name, value in headers:
        if name == b"content-type" or name.lower() == b"content-type":
            return value.startswith(_EVENT_STREAM)
    return False


async def observed(handler, scope, receive, send, surface: str) -> None:
    status = 0
    stream = None

    async def sending(message) -> None:
        nonlocal status, stream
        if message["type"] == "http.response.start":
            status = message["status"]
            if _is_event_stream(message.get("headers") or ()):
                stream = metrics.stream_gauge(surface)
                stream.inc()
        await send(message)

    try:
        await handler(scope, receive, sending)
    finally:
        if stream is not None:
            stream.dec()
        metrics.observe_response(surface, status)
        if tracing.ENABLED:
            tracing.finish(status)
