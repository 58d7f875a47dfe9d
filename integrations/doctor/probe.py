"""The doctor's HTTP: every request through the SSRF guard, every exchange kept as masked text.

The doctor only ever calls URLs built from SITE_URL, never a URL a tenant typed. A public
SITE_URL passes the guard as any public host does. A SITE_URL on loopback (a local install, the
test suite) is this machine's own site: exactly the addresses its host resolves to are admitted
for the doctor's requests, and nothing else. A SITE_URL on a private network (a LAN install) is
refused by the guard like any other private address unless DOCTOR_ALLOW_PRIVATE_SITE is set,
and then admitted the same narrow way.
"""

import asyncio
import ipaddress
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx2
import orjson

from servers.outbound import BlockedDestination, OutboundError, guarded_client, guarded_request
from servers.outbound.addresses import refusal_reason
from servers.outbound.resolver import resolve
from vault.masking import Masker

BODY_SHOWN = 1500
HEADERS_SHOWN = (
    "content-type",
    "www-authenticate",
    "mcp-session-id",
    "mcp-protocol-version",
    "access-control-allow-origin",
    "access-control-allow-methods",
    "access-control-allow-headers",
    "access-control-expose-headers",
    "location",
    "retry-after",
    "x-accel-buffering",
    "cache-control",
)


@dataclass
class Exchange:
    request: str
    response: str = ""
    status: int | None = None
    headers: httpx2.Headers | None = None
    body: bytes = b""
    error: str | None = None
    elapsed_ms: float | None = None

    def json(self):
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None

    def header(self, name: str) -> str:
        return self.headers.get(name, "") if self.headers else ""


LOOPBACK = "a loopback address"


@dataclass
class SiteAddress:
    host: str
    addresses: list
    non_public: str | None  # why the host is not reachable from the internet, if it is not
    error: str | None = None

    @property
    def local(self) -> bool:
        """Every address is this machine's own (a local install)."""
        return bool(self.addresses) and all(refusal_reason(a) == LOOPBACK for a in self.addresses)

    def described(self) -> str:
        """ "127.0.0.1 is a loopback address", "localhost resolves to 127.0.0.1, a loopback
        address", "mcp.example.com resolves to 203.0.113.7, a public address"."""
        what = self.non_public or "a public address"
        shown = ", ".join(str(a) for a in self.addresses)
        if shown == self.host.strip("[]"):
            return f"{self.host} is {what}"
        return f"{self.host} resolves to {shown}, {what}"


async def site_address(url: str) -> SiteAddress:
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        addresses = await resolve(host, parts.port or (443 if parts.scheme == "https" else 80))
    except OSError as exc:
        return SiteAddress(host, [], None, f"{host} does not resolve: {exc}")
    reasons = [r for r in (refusal_reason(a) for a in addresses) if r]
    return SiteAddress(host, addresses, reasons[0] if reasons else None)


class Probe:
    def __init__(self, *, masker: Masker, networks=None, timeout: float = 10.0) -> None:
        self.masker = masker
        self.networks = networks  # None: the guard's usual rules (public addresses only)
        self.timeout = timeout

    @classmethod
    def for_site(cls, site: SiteAddress, *, allow_private: bool, masker: Masker) -> "Probe":
        networks = None
        if site.non_public and allow_private:
            networks = [ipaddress.ip_network(a) for a in site.addresses]
        return cls(masker=masker, networks=networks)

    def _request_text(self, method, url, headers, body) -> str:
        lines = [f"{method} {url}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body is not None:
            text = body if isinstance(body, str) else orjson.dumps(body).decode()
            lines += ["", text[:BODY_SHOWN]]
        return self.masker.mask("\n".join(lines))

    def _response_text(self, status, reason, headers, body: bytes, note: str = "") -> str:
        lines = [f"{status} {reason}".strip()]
        lines += [f"{k}: {headers[k]}" for k in HEADERS_SHOWN if k in headers]
        text = body[:BODY_SHOWN].decode("utf-8", errors="replace")
        if text:
            lines += ["", text + ("…" if len(body) > BODY_SHOWN else "")]
        if note:
            lines += ["", note]
        return self.masker.mask("\n".join(lines))

    async def send(self, method: str, url: str, *, headers=None, json=None) -> Exchange:
        exchange = Exchange(request=self._request_text(method, url, headers, json))
        started = time.perf_counter()
        try:
            response = await guarded_request(
                method,
                url,
                headers=headers,
                content=orjson.dumps(json) if json is not None else None,
                networks=self.networks,
                timeout=self.timeout,
                max_bytes=256 * 1024,
                follow_redirects=False,
            )
        except (BlockedDestination, OutboundError) as exc:
            exchange.error = self.masker.mask(str(exc))
            exchange.response = exchange.error
            return exchange
        finally:
            exchange.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        exchange.status = response.status_code
        exchange.headers = response.headers
        exchange.body = response.content
        exchange.response = self._response_text(
            response.status_code, response.reason_phrase, response.headers, response.content
        )
        return exchange

    async def first_event(
        self, url: str, *, headers: dict, json: dict, wait: float
    ) -> tuple[Exchange, float | None, float | None]:
        """POSTs and reads the answer as a stream: (exchange, ms to the headers, ms to the first
        bytes of the body). A stream that stays open is left after its first event or `wait`."""
        exchange = Exchange(request=self._request_text("POST", url, headers, json))
        started = time.perf_counter()
        to_headers = to_event = None
        body = b""
        client = guarded_client(None, networks=self.networks, timeout=self.timeout)
        try:
            async with client:
                request = client.build_request("POST", url, headers=headers, json=json)
                try:
                    # A buffering proxy may hold the headers back with the body.
                    async with asyncio.timeout(wait):
                        response = await client.send(request, stream=True)
                except TimeoutError:
                    exchange.response = f"no answer (not even headers) in {wait:g} s"
                    return exchange, None, None
                to_headers = (time.perf_counter() - started) * 1000
                exchange.status = response.status_code
                exchange.headers = response.headers
                try:
                    body = await _first_chunk(response, wait)
                    if body:
                        to_event = (time.perf_counter() - started) * 1000
                finally:
                    await response.aclose()
        except (BlockedDestination, OutboundError, httpx2.HTTPError) as exc:
            exchange.error = self.masker.mask(str(exc) or type(exc).__name__)
            exchange.response = exchange.error
            return exchange, to_headers, to_event
        exchange.body = body
        exchange.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        note = f"headers after {to_headers:.0f} ms; " + (
            f"first event after {to_event:.0f} ms" if to_event else f"no event in {wait:g} s"
        )
        exchange.response = self._response_text(
            response.status_code, response.reason_phrase, response.headers, body, note
        )
        return exchange, to_headers, to_event


async def _first_chunk(response, wait: float) -> bytes:
    stream = response.aiter_raw()
    try:
        async with asyncio.timeout(wait):
            async for chunk in stream:
                if chunk.strip():
                    return chunk
    except TimeoutError:
        return b""
    return b""
