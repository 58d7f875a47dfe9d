"""The consent flow in headless Chromium: sign up in the middle of an authorization, a refusal
for someone outside the server's organization, and Deny. Screenshots go to
test-artifacts/screenshots/oauth-*.png."""

from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2

from tests.conftest import free_port
from tests.oauth.conftest import PASSWORD, oauth_browser, pkce

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def authorize_url(live, slug: str, callback: str) -> str:
    registered = httpx2.post(
        f"{live.url}/oauth/register",
        json={"client_name": "Browser test app", "redirect_uris": [callback]},
    ).json()
    _verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": callback,
        "state": "browser-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": live.mcp_url(slug),
        "scope": "mcp offline_access",
    }
    return f"{live.url}/oauth/authorize?{urlencode(query)}"


async def browser_page(playwright):
    browser = await playwright.chromium.launch(
        executable_path=oauth_browser.CHROMIUM, args=oauth_browser.ARGS
    )
    return browser, await browser.new_page()


async def test_someone_signing_up_mid_flow_is_refused_outside_the_organization(oauth_live, person):
    from playwright.async_api import async_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    url = authorize_url(oauth_live, person.server.slug, f"http://127.0.0.1:{free_port()}/cb")
    async with async_playwright() as playwright:
        browser, page = await browser_page(playwright)
        try:
            await page.goto(url)
            assert "/login/" in page.url
            await page.click("text=Create an account")
            assert "/signup/" in page.url and "next=" in page.url
            await page.fill("input[name=email]", f"new-{person.server.slug}@example.com")
            await page.fill("input[name=password]", "a long new password 9")
            # Until the page the sign-up leads to (waiting for a load state returns at once for
            # the sign-up page itself, still loaded while the POST is under way).
            async with page.expect_navigation(url=lambda u: "/signup/" not in u):
                await page.click("button[type=submit]")
            # Back at the authorization, signed in, but not a member of the server's organization.
            assert "/oauth/authorize" in page.url
            refusal = await page.inner_text("[data-refusal]")
            assert "not a member" in refusal
            await page.screenshot(path=SCREENSHOTS / "oauth-not-member.png", full_page=True)
            assert not await page.locator("button[value=allow]").count()
        finally:
            await browser.close()


async def test_the_consent_page_names_everything_and_deny_goes_back(oauth_live, person):
    from playwright.async_api import async_playwright

    callback = f"http://127.0.0.1:{free_port()}/cb"
    url = authorize_url(oauth_live, person.server.slug, callback)
    async with async_playwright() as playwright:
        browser, page = await browser_page(playwright)
        sent_to = []
        page.on("request", lambda r: sent_to.append(r.url) if r.url.startswith(callback) else None)
        try:
            await page.goto(url)
            await page.fill("input[name=username]", person.user.email)
            await page.fill("input[name=password]", PASSWORD)
            async with page.expect_navigation(url=lambda u: "/login/" not in u):
                await page.click("button[type=submit]")
            assert await page.inner_text("[data-client-name]") == "Browser test app"
            assert await page.inner_text("[data-client-kind]") == "Self-registered"
            # The WHATWG host, port included: where the browser will go.
            assert await page.inner_text("[data-redirect-host]") == callback.split("/")[2]
            scopes = await page.inner_text("[data-scopes]")
            assert "offline_access" in scopes and "mcp" in scopes
            await page.screenshot(path=SCREENSHOTS / "oauth-consent.png", full_page=True)
            async with page.expect_request(lambda r: r.url.startswith(callback)):
                await page.click("button[value=deny]", no_wait_after=True)
        finally:
            await browser.close()
    answer = parse_qs(urlsplit(sent_to[0]).query)
    assert answer["error"] == ["access_denied"]
    assert answer["state"] == ["browser-state"]
    assert answer["iss"] == [oauth_live.url]
