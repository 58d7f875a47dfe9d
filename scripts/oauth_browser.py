"""Drive a browser through getmcp's OAuth sign-in and consent (tests and scripts/conformance.sh).

    python scripts/oauth_browser.py --email E --password P --url AUTHORIZE_URL \
        --redirect-prefix http://127.0.0.1:3000/callback

Opens the authorization URL in headless Chromium, logs in when the login page appears, presses
Allow on the consent page, and prints the URL the browser was finally sent to (the client's
redirect URI with code, state and iss).
"""

import argparse
import asyncio
import contextlib

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


async def sign_in_and_consent(page, url: str, *, email: str, password: str, redirect_prefix: str):
    """Returns the redirect URL the consent sent the browser to (the first request to
    `redirect_prefix`; whether anything listens there does not matter)."""
    loop = asyncio.get_running_loop()
    captured: asyncio.Future = loop.create_future()
    refused: list[str] = []

    def on_request(request):
        # Request events fire for redirect targets too (routes do not).
        if request.url.startswith(redirect_prefix) and not captured.done():
            captured.set_result(request)

    def on_response(response):
        if response.status >= 400 and not response.url.startswith(redirect_prefix):
            refused.append(f"{response.status} {response.request.method} {response.url}")

    page.on("request", on_request)
    page.on("response", on_response)
    await page.goto(url)
    if "/login/" in page.url:
        await page.fill("input[name=username]", email)
        await page.fill("input[name=password]", password)
        # Wait for the page the login leads to (the consent page, or the client's redirect).
        # Waiting for a load state instead returns at once for the login page itself, which is
        # still loaded while the POST is under way: the consent button would be looked for on
        # the login page.
        async with page.expect_navigation(url=lambda u: "/login/" not in u, timeout=30000):
            await page.click("button[type=submit]")
    if not captured.done():
        allow = page.locator("button[name=decision][value=allow]")
        if not await allow.count():
            text = " ".join((await page.inner_text("body")).split())[:700]
            raise RuntimeError(f"No consent page at {page.url}: {text} (refused: {refused})")
        await allow.click(no_wait_after=True)
    try:
        redirect = await asyncio.wait_for(captured, 30)
    except TimeoutError:
        raise RuntimeError(f"The consent led nowhere; refused: {refused}") from None
    # Let the redirect reach the client's callback server, when one listens there: closing the
    # browser earlier cancels the callback request, and the client waits for it for ever. The
    # page's load state cannot tell: the consent page is still the loaded document while the
    # redirect is under way. The request's own outcome can: its response (the callback server
    # answered), or None at once where nothing listens. A loaded machine may need far longer.
    with contextlib.suppress(Exception):
        await asyncio.wait_for(redirect.response(), 30)
    return redirect.url


async def main() -> None:
    from playwright.async_api import async_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--redirect-prefix", required=True)
    options = parser.parse_args()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = await browser.new_page()
            print(
                await sign_in_and_consent(
                    page,
                    options.url,
                    email=options.email,
                    password=options.password,
                    redirect_prefix=options.redirect_prefix,
                )
            )
        finally:
            await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
