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
    captured: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_request(request):
        # Request events fire for redirect targets too (routes do not).
        if request.url.startswith(redirect_prefix) and not captured.done():
            captured.set_result(request.url)

    page.on("request", on_request)
    await page.goto(url)
    if "/login/" in page.url:
        await page.fill("input[name=username]", email)
        await page.fill("input[name=password]", password)
        await page.click("button[type=submit]")
        await page.wait_for_load_state()
    if not captured.done():
        allow = page.locator("button[name=decision][value=allow]")
        if not await allow.count():
            text = " ".join((await page.inner_text("body")).split())[:700]
            raise RuntimeError(f"No consent page at {page.url}: {text}")
        await allow.click(no_wait_after=True)
    redirected = await asyncio.wait_for(captured, 30)
    # Let the redirect reach the client's callback server, when one listens there.
    with contextlib.suppress(Exception):
        await page.wait_for_load_state("load", timeout=5000)
    return redirected


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
