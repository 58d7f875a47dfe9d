"""getmcp's uvicorn protocol tells the app when a request's whole body has arrived
(BODY_RECEIVED): the endpoint then reads it without arming a deadline, and must never be told so
while bytes of the body are still on their way. It also tells the app when a client goes away
before its answer (ON_DISCONNECT), and only then."""

import asyncio
import socket
import threading
import time

import pytest
import uvicorn

from gateway.endpoint.http import BODY_RECEIVED, ON_DISCONNECT, HttpRequest
from getmcp.http_protocol import HttpProtocol
from tests.waiting import stays, wait_until

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


# What the /held and /answered requests' disconnect callbacks saw, by the request's tag.
notices: dict[str, threading.Event] = {}


async def app(scope, receive, send):
    """Answers with whether the body was marked received when the app started, then the body
    as read through the endpoint's own reader. /held never answers until its client has gone;
    /answered answers at once; both note, under their x-tag, when told the client went."""
    if scope["type"] != "http":
        return
    if scope["path"] in ("/held", "/answered"):
        await disconnect_noted(scope, send)
        return
    marked = bool(scope.get("extensions", {}).get(BODY_RECEIVED))
    body = await HttpRequest(scope, receive).read_body(1 << 20)
    answer = b"marked=%d body=%s" % (marked, body)
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(answer))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


async def disconnect_noted(scope, send) -> None:
    tag = dict(scope["headers"])[b"x-tag"].decode()
    notice = notices[tag] = threading.Event()
    gone = asyncio.Event()
    scope["extensions"][ON_DISCONNECT].extend([notice.set, gone.set])
    if scope["path"] == "/held":
        await gone.wait()
        return
    headers = [(b"content-length", b"2")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def port():
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, http=HttpProtocol, lifespan="off", log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started and server.servers, interval=0.02, what="uvicorn to start")
    yield server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(5)


def head(length: int) -> bytes:
    return (
        b"POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )


def answer_of(sock: socket.socket) -> bytes:
    data = b""
    while b"body=" not in data or not data.endswith(b"}"):
        chunk = sock.recv(4096)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data.split(b"\r\n\r\n", 1)[1]


def test_a_request_sent_whole_is_marked_received_and_its_body_read_at_once(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head(len(BODY)) + BODY)
        assert answer_of(sock) == b"marked=1 body=" + BODY


def test_a_body_still_arriving_is_not_marked_and_is_read_whole_when_it_comes(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head(len(BODY)) + BODY[:10])
        # Deliberate: a body that is still arriving is the subject (the app starts and waits for
        # the rest, under its deadline).
        time.sleep(0.3)
        sock.sendall(BODY[10:])
        assert answer_of(sock) == b"marked=0 body=" + BODY


def test_each_request_of_a_kept_alive_connection_is_marked_for_itself(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head(len(BODY)) + BODY)
        assert answer_of(sock) == b"marked=1 body=" + BODY
        sock.sendall(head(len(BODY)) + BODY[:5])
        time.sleep(0.3)  # deliberate: the rest of the body comes late, as above
        sock.sendall(BODY[5:])
        assert answer_of(sock) == b"marked=0 body=" + BODY


def tagged_get(path: str, tag: str) -> bytes:
    return b"GET %s HTTP/1.1\r\nHost: localhost\r\nX-Tag: %s\r\n\r\n" % (
        path.encode(),
        tag.encode(),
    )


def test_a_client_that_goes_away_before_its_answer_is_noticed_by_the_app(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(tagged_get("/held", "held"))
        wait_until(lambda: "held" in notices, what="the app to start")
        assert not notices["held"].is_set()
    assert notices["held"].wait(5), "the app was not told its client went away"


def test_a_client_that_leaves_after_its_answer_is_not_reported_gone(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(tagged_get("/answered", "answered"))
        data = b""
        while not data.endswith(b"ok"):
            data += sock.recv(4096)
    stays(lambda: not notices["answered"].is_set(), 0.3, what="no disconnect notice")
