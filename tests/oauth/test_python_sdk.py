"""The official Python SDK's OAuthClientProvider connects end to end against a live server:
discovery from the 401, registration (DCR, or a client metadata document on loopback), a
headless-Chromium login and consent, the token, initialize, list, call, and a refresh once the
short-lived access token has expired."""

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from oauth.models import Grant
from tests.conftest import free_port
from tests.oauth.conftest import ACCESS_SECONDS, PASSWORD, oauth_browser
from tests.waiting import wait_until_async


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class BrowserConsent:
    """The redirect and callback handlers: Chromium logs in and allows, the redirect is caught."""

    def __init__(self, email: str, callback: str):
        self.email = email
        self.callback = callback
        self.redirected = None
        self.authorize_urls = []

    async def redirect_handler(self, url: str) -> None:
        from playwright.async_api import async_playwright

        self.authorize_urls.append(url)
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=oauth_browser.CHROMIUM, args=oauth_browser.ARGS
            )
            try:
                page = await browser.new_page()
                self.redirected = await oauth_browser.sign_in_and_consent(
                    page, url, email=self.email, password=PASSWORD, redirect_prefix=self.callback
                )
            finally:
                await browser.close()

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.redirected).query).items()}
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


async def refused(url: str, token: str) -> bool:
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.post(url, json={}, headers={"Authorization": f"Bearer {token}"})
    return answer.status_code == 401


async def connect_call_and_refresh(url: str, provider, storage) -> None:
    http = create_mcp_http_client(auth=provider)
    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = await client.list_tools()
        assert "echo" in {t.name for t in tools.tools}
        first_token = storage.tokens.access_token
        echoed = await client.call_tool("echo", {"message": "over oauth"})
        assert echoed.content[0].text == "You said over oauth"

        await wait_until_async(
            lambda: refused(url, first_token),
            timeout=ACCESS_SECONDS + 10,
            interval=0.1,
            what="the server to refuse the expired access token",
        )
        # The SDK counts the token's lifetime from when its answer arrived, a moment after the
        # server started counting. Until the SDK also sees it expired, it would send it, get a
        # 401 and authorize from the start (a new grant, so the session bound to the first one
        # is gone), which is not the refresh this test follows.
        await wait_until_async(
            lambda: not provider.context.is_token_valid(),
            timeout=10,
            interval=0.05,
            what="the SDK to see its access token expired",
        )
        again = await client.call_tool("echo", {"message": "after refresh"})
        assert again.content[0].text == "You said after refresh"
        assert storage.tokens.access_token != first_token
        assert storage.tokens.refresh_token


async def test_the_python_sdk_connects_with_dynamic_registration(oauth_live, person, committed):
    callback = f"http://127.0.0.1:{free_port()}/callback"
    consent = BrowserConsent(person.user.email, callback)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=oauth_live.mcp_url(person.server.slug),
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK test", redirect_uris=[callback]
        ),
        storage=storage,
        redirect_handler=consent.redirect_handler,
        callback_handler=consent.callback_handler,
    )
    await connect_call_and_refresh(oauth_live.mcp_url(person.server.slug), provider, storage)

    authorize = parse_qs(urlsplit(consent.authorize_urls[0]).query)
    assert authorize["resource"] == [oauth_live.mcp_url(person.server.slug)]
    assert storage.client_info.client_id.startswith("gmcp_client_")
    grant = await asyncio.to_thread(
        committed, lambda: Grant.objects.select_related("client").get(user=person.user)
    )
    assert grant.client.client_name == "Python SDK test"
    assert grant.client.kind == "registered"


class DocumentServer:
    """Serves one client metadata document on loopback (http, allowed by an explicit setting)."""

    def __init__(self, redirect_uri: str):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/client.json"
        self.fetches = 0
        document = json.dumps(
            {
                "client_id": self.url,
                "client_name": "CIMD test client",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none",
            }
        ).encode()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                owner.fetches += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("cache-control", "max-age=300")
                self.end_headers()
                self.wfile.write(document)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()


async def test_the_python_sdk_connects_with_a_client_metadata_document(
    oauth_live, person, committed, monkeypatch
):
    # The SDK takes only https document URLs; the loopback test document is http, which the
    # server accepts here only because OAUTH_CIMD_ALLOW_HTTP_LOOPBACK is set for this server.
    import mcp.client.auth.oauth2 as sdk_oauth

    monkeypatch.setattr(sdk_oauth, "is_valid_client_metadata_url", lambda url: bool(url))
    monkeypatch.setattr(
        sdk_oauth,
        "should_use_client_metadata_url",
        lambda metadata, url: bool(
            url and metadata and metadata.client_id_metadata_document_supported
        ),
    )
    callback = f"http://127.0.0.1:{free_port()}/callback"
    document = DocumentServer(callback)
    try:
        consent = BrowserConsent(person.user.email, callback)
        storage = MemoryStorage()
        provider = OAuthClientProvider(
            server_url=oauth_live.mcp_url(person.server.slug),
            client_metadata=OAuthClientMetadata(client_name="ignored", redirect_uris=[callback]),
            storage=storage,
            redirect_handler=consent.redirect_handler,
            callback_handler=consent.callback_handler,
            client_metadata_url=document.url,
        )
        await connect_call_and_refresh(oauth_live.mcp_url(person.server.slug), provider, storage)
    finally:
        document.stop()
    assert storage.client_info.client_id == document.url
    assert document.fetches >= 1
    grant = await asyncio.to_thread(
        committed, lambda: Grant.objects.select_related("client").get(user=person.user)
    )
    assert grant.client.client_name == "CIMD test client"
    assert grant.client.kind == "metadata_document"
