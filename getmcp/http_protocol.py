"""uvicorn's HTTP protocol with a deadline on request headers (slowloris).

uvicorn bounds the idle time between requests (--timeout-keep-alive) but not the time a client
takes to send a request's headers: a client trickling a header byte every few seconds held its
connection for ever, and a few hundred of them held a process's connections. This protocol
closes a connection that has not completed a request's headers HTTP_HEADER_TIMEOUT_SECONDS after
it opened or after its previous response ended. Body reads are bounded in the ASGI app
(gateway/endpoint/http.py, getmcp/asgi.py).

On httptools it also writes a small answer in one syscall (CorkedHead), tells the app when a
request's body has fully arrived (BODY_RECEIVED) and when its client went away (ON_DISCONNECT).

Use it with `uvicorn --http getmcp.http_protocol:HttpProtocol` (Makefile, scripts) or the gunicorn
worker class `getmcp.http_protocol.UvicornWorker` (Dockerfile, docker-compose.yml). Behind a
reverse proxy that buffers requests (nginx's client_header_timeout), this is a second line.
"""

import asyncio
import logging

from django.conf import settings
from uvicorn_worker import UvicornWorker as _Worker

from gateway.endpoint.http import BODY_RECEIVED, ON_DISCONNECT

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # httptools is optional in uvicorn; h11 always ships
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base

log = logging.getLogger(__name__)


def header_timeout() -> float:
    try:
        return settings.HTTP_HEADER_TIMEOUT_SECONDS
    except Exception:  # settings not configured (a bare uvicorn import): the documented default
        return 10.0


class HeaderDeadline:
    """Mixin for a uvicorn HTTP protocol: whenever the connection starts waiting for a new
    request, notes the time; if no request's headers completed HTTP_HEADER_TIMEOUT_SECONDS
    later, the connection is closed.

    One timer per connection, armed when none is pending and re-armed for the noted deadline
    when it fires early: a response's end only notes the time. Arming and cancelling a timer
    per request cost a few percent of a warm call's CPU."""

    _header_timer: asyncio.TimerHandle | None = None
    _armed_cycle = None
    _waiting_since = 0.0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._wait_for_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._wait_for_headers()

    def connection_lost(self, exc) -> None:
        self._cancel_header_deadline()
        super().connection_lost(exc)

    def _wait_for_headers(self) -> None:
        self._armed_cycle = self.cycle
        self._waiting_since = self.loop.time()
        if self._header_timer is None:
            deadline = self._waiting_since + header_timeout()
            self._header_timer = self.loop.call_at(deadline, self._header_deadline_passed)

    def _cancel_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_deadline_passed(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return  # closed already, or upgraded to another protocol (websocket)
        in_progress = self.cycle is not None and not self.cycle.response_complete
        if self.cycle is not self._armed_cycle or in_progress:
            return  # a request's headers came; the end of its response starts a new wait
        deadline = self._waiting_since + header_timeout()
        if self.loop.time() < deadline:  # the connection started waiting again since
            self._header_timer = self.loop.call_at(deadline, self._header_deadline_passed)
        else:
            self.transport.close()


class CorkedResponse:
    """A response cycle's view of its transport: the response head waits for the first body
    bytes (or for the end of this loop pass, whichever comes first), so a small answer leaves
    in one write, one syscall and one TCP segment, instead of two. uvicorn writes the head as
    soon as the app sends `http.response.start`; on a warm call that second syscall was a fifth
    of the process's CPU (bench/README.md). Every later write goes straight through."""

    __slots__ = ("_transport", "_loop", "_held", "_open")

    def __init__(self, transport, loop):
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._open = False  # the head went out: write through

    def write(self, data) -> None:
        if self._open:
            self._transport.write(data)
        elif self._held is None:
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
        else:
            held, self._held, self._open = self._held, None, True
            self._transport.write(held + data)

    def flush(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.write(held)
        self._open = True

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name):
        return getattr(self._transport, name)


class CorkedHead:
    """Mixin for uvicorn's httptools protocol: each request's cycle writes through CorkedResponse,
    and a request whose body has fully arrived says so in its scope's extensions (BODY_RECEIVED),
    so the endpoint reads it without arming a deadline."""

    def on_message_complete(self):
        super().on_message_complete()
        cycle = self.cycle
        # uvicorn marks the body complete (more_body False, its event set) unless the request
        # is an upgrade or already answered; then receive() returns the body without waiting.
        if cycle is not None and not cycle.more_body:
            cycle.scope.setdefault("extensions", {})[BODY_RECEIVED] = True

    def on_headers_complete(self):
        super().on_headers_complete()
        cycle = self.cycle
        # The cycle's task has been created, not started: it writes through the cork only.
        if cycle is not None and not isinstance(cycle.transport, CorkedResponse):
            cycle.transport = CorkedResponse(cycle.transport, self.loop)


class DisconnectNotice:
    """Mixin for uvicorn's httptools protocol: each request's scope carries a list of callables
    (ON_DISCONNECT) that the app may add to; they are called once if the connection is lost
    before the response completes. The endpoint cancels a running call that way, without a task
    per call awaiting receive() for the disconnect."""

    def on_headers_complete(self):
        super().on_headers_complete()
        cycle = self.cycle
        # The cycle's task has been created, not started: the app sees the list from its start.
        if cycle is not None:
            cycle.scope.setdefault("extensions", {})[ON_DISCONNECT] = []

    def connection_lost(self, exc) -> None:
        cycle = self.cycle
        callbacks = ()
        if cycle is not None and not cycle.response_complete:
            callbacks = cycle.scope.get("extensions", {}).pop(ON_DISCONNECT, ())
        super().connection_lost(exc)
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("a disconnect callback failed")


if _Base.__name__ == "HttpToolsProtocol":

    class HttpProtocol(HeaderDeadline, DisconnectNotice, CorkedHead, _Base):
        pass

else:  # h11's cycle keeps no transport of its own

    class HttpProtocol(HeaderDeadline, _Base):  # type: ignore[no-redef]
        pass


class UvicornWorker(_Worker):
    """gunicorn worker class: uvicorn with the header deadline. Its base comes from the
    uvicorn-worker package, where uvicorn moved its deprecated `uvicorn.workers`."""

    CONFIG_KWARGS = {**_Worker.CONFIG_KWARGS, "http": "getmcp.http_protocol:HttpProtocol"}
