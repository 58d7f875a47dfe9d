"""Redirect URIs in headless Chromium: the server's WHATWG reading agrees with the browser's on
every URI of the matrix, the host the consent page shows is the host the browser is then sent
to, and a tricked redirect URI sends the browser nowhere, signed out or not."""

from urllib.parse import urlencode

import httpx2
import pytest

from oauth import redirects
from tests.conftest import free_port
from tests.oauth.conftest import PASSWORD, oauth_browser, pkce
from tests.oauth.test_redirects import ACCEPTED, AUTHORIZE_TRICKS, REFUSED_EVERYWHERE

MATRIX = ACCEPTED + [p.values[0] for p in REFUSED_EVERYWHERE + AUTHORIZE_TRICKS]

READ_IN_BROWSER = """uris => uris.map(uri => {
  try {
    const url = new URL(uri);
    return {href: url.href, host: url.host, user: url.username + url.password, hash: url.hash};
  } catch (error) {
    return null;
  }
})"""


async def launched(playwright):
    return await playwright.chromium.launch(
        executable_path=oauth_browser.CHROMIUM, args=oauth_browser.ARGS
    )


async def test_chromium_reads_every_uri_of_the_matrix_as_the_server_does():
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await launched(playwright)
        try:
            page = await browser.new_page()
            read = await page.evaluate(READ_IN_BROWSER, MATRIX)
        finally:
            await browser.close()
    for uri, browser_reading in zip(MATRIX, read, strict=True):
        ours = redirects.parse(uri)
        if browser_reading is None:
            assert ours is None or redirects.problem(uri), uri
            continue
        assert ours is not None, uri
        assert (ours.href, ours.host) == (browser_reading["href"], browser_reading["host"]), uri
        if redirects.problem(uri) is None:
            # What passes is what the browser uses, character for character.
            assert browser_reading["href"] == uri
            assert not browser_reading["user"] and not browser_reading["hash"]
            assert redirects.host_of(uri) == (browser_reading["host"] or uri.split(":")[0] + ":")


def register(live, uris: list[str]) -> str:
    response = httpx2.post(
        f"{live.url}/oauth/register",
        json={"client_name": "Loopback app", "redirect_uris": uris},
        timeout=60,  # the first request of a fresh server on a loaded machine
    )
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorize_url(live, client_id: str, slug: str, redirect_uri: str, **overrides) -> str:
    _verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": "browser-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": live.mcp_url(slug),
        **overrides,
    }
    return f"{live.url}/oauth/authorize?{urlencode(query)}"


def leaving(live, requests: list[str]) -> list[str]:
    """The requests the browser made anywhere but the site itself."""
    return [url for url in requests if not url.startswith(live.url + "/")]


@pytest.mark.parametrize("loopback", ["127.0.0.1", "[::1]"])
async def test_the_host_the_consent_page_shows_is_where_allow_sends_the_browser(
    oauth_live, person, loopback
):
    from playwright.async_api import async_playwright

    client_id = register(oauth_live, [f"http://{loopback}/cb"])
    callback = f"http://{loopback}:{free_port()}/cb"
    url = authorize_url(oauth_live, client_id, person.server.slug, callback)
    async with async_playwright() as playwright:
        browser = await launched(playwright)
        try:
            page = await browser.new_page()
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            await page.goto(url)
            await page.fill("input[name=username]", person.user.email)
            await page.fill("input[name=password]", PASSWORD)
            async with page.expect_navigation(url=lambda u: "/login/" not in u):
                await page.click("button[type=submit]")
            shown = await page.inner_text("[data-redirect-host]")
            async with page.expect_request(lambda r: not r.url.startswith(oauth_live.url + "/")):
                await page.click("button[value=allow]", no_wait_after=True)
            went = leaving(oauth_live, requests)
            # Read by the browser itself, on a page of its own (the other one is navigating).
            blank = await browser.new_page()
            reached = await blank.evaluate("url => new URL(url).host", went[0])
        finally:
            await browser.close()
    assert shown == reached == callback.split("/")[2]
    assert went[0].startswith(callback + "?code=")


@pytest.mark.parametrize(
    "trick",
    [
        "http://attacker\\@127.0.0.1:{port}/cb",
        "http://attacker\\@127.0.0.1/cb",
        "http:/\\127.0.0.1:{port}/cb",
        "http://127.0.0.1:{port}/cb#x",
        "http://127.0.0.1:{port}/c\tb",
    ],
)
async def test_a_tricked_redirect_uri_sends_the_browser_nowhere_before_or_after_sign_in(
    oauth_live, person, trick
):
    from playwright.async_api import async_playwright

    client_id = register(oauth_live, ["http://127.0.0.1/cb"])
    redirect_uri = trick.format(port=free_port())
    async with async_playwright() as playwright:
        browser = await launched(playwright)
        try:
            page = await browser.new_page()
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            # An error answer needs no sign-in: it must not be redirected either.
            error_url = authorize_url(
                oauth_live, client_id, person.server.slug, redirect_uri, response_type="token"
            )
            answer = await page.goto(error_url)
            assert answer is not None and answer.status == 400
            assert "redirect_uri" in await page.inner_text("[data-oauth-error]")
            authorization = authorize_url(oauth_live, client_id, person.server.slug, redirect_uri)
            await page.goto(authorization)
            assert "/login/" not in page.url  # refused before any sign-in
            assert "redirect_uri" in await page.inner_text("[data-oauth-error]")
            # Signed in, the same request is still only shown.
            await page.goto(f"{oauth_live.url}/login/")
            await page.fill("input[name=username]", person.user.email)
            await page.fill("input[name=password]", PASSWORD)
            async with page.expect_navigation(url=lambda u: "/login/" not in u):
                await page.click("button[type=submit]")
            answer = await page.goto(authorization)
            assert answer is not None and answer.status == 400
            assert "redirect_uri" in await page.inner_text("[data-oauth-error]")
            assert not await page.locator("button[value=allow]").count()
        finally:
            await browser.close()
    assert leaving(oauth_live, requests) == []
