"""Headless Chromium through the test OpenID provider's login and consent pages."""

import asyncio
import contextlib

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


async def sign_in(
    page,
    url: str | None,
    *,
    issuer: str,
    username: str,
    password: str,
    redirect_prefix: str,
    timeout: float = 30,
) -> str:
    """Opens `url` (None: goes on from where the page is); signs in on the provider's login page and presses Allow on its consent page
    when they show up (a provider session and an earlier grant skip them). Returns the first URL
    under `redirect_prefix` the browser was sent to, after that request was answered (or failed),
    so a callback served there has done its work."""
    loop = asyncio.get_running_loop()
    captured: asyncio.Future = loop.create_future()

    def on_request(request):
        # Request events fire for redirect targets too (routes do not).
        if request.url.startswith(redirect_prefix) and not captured.done():
            captured.set_result(request)

    page.on("request", on_request)
    try:
        if url is not None:
            try:
                await page.goto(url)
            except Exception:
                # Straight to the callback (a provider session and a grant already): where
                # nothing listens there, the navigation itself fails, after the request we want.
                if not captured.done():
                    raise
        interaction = f"{issuer}/interaction/"
        on_login = page.url.startswith(interaction) and not captured.done()
        if on_login and await page.locator("input[name=password]").count():
            await page.fill("input[name=username]", username)
            await page.fill("input[name=password]", password)
            async with page.expect_navigation(timeout=timeout * 1000):
                await page.click("button[type=submit]")
            if await page.locator("input[name=password]").count():
                text = " ".join((await page.inner_text("body")).split())
                raise RuntimeError(f"The provider refused the sign-in: {text}")
        if not captured.done() and page.url.startswith(interaction):
            allow = page.locator("button[name=decision][value=allow]")
            if not await allow.count():
                text = " ".join((await page.inner_text("body")).split())[:500]
                raise RuntimeError(f"No consent page at {page.url}: {text}")
            await allow.click(no_wait_after=True)
        try:
            redirect = await asyncio.wait_for(captured, timeout)
        except TimeoutError:
            text = " ".join((await page.inner_text("body")).split())[:500]
            raise RuntimeError(f"The sign-in led to {page.url}, not the callback: {text}") from None
        # Let the callback answer before the caller looks at what it did.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(redirect.response(), timeout)
        # The page is still the provider's until the document the callback led to commits.
        with contextlib.suppress(Exception):
            await page.wait_for_url(lambda u: not u.startswith(issuer), timeout=timeout * 1000)
        return redirect.url
    finally:
        page.remove_listener("request", on_request)


def sign_in_sync(
    page,
    url: str | None,
    *,
    issuer: str,
    username: str,
    password: str,
    redirect_prefix: str,
    timeout: float = 30,
) -> str:
    """`sign_in` for Playwright's sync API (tests/browser drives Chromium that way)."""
    captured: list = []

    def on_request(request):
        if request.url.startswith(redirect_prefix) and not captured:
            captured.append(request)

    page.on("request", on_request)
    try:
        if url is not None:
            try:
                page.goto(url)
            except Exception:
                if not captured:  # see sign_in
                    raise
        interaction = f"{issuer}/interaction/"
        on_login = page.url.startswith(interaction) and not captured
        if on_login and page.locator("input[name=password]").count():
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", password)
            with page.expect_navigation(timeout=timeout * 1000):
                page.click("button[type=submit]")
            if page.locator("input[name=password]").count():
                text = " ".join(page.inner_text("body").split())
                raise RuntimeError(f"The provider refused the sign-in: {text}")
        if not captured and page.url.startswith(interaction):
            allow = page.locator("button[name=decision][value=allow]")
            if not allow.count():
                text = " ".join(page.inner_text("body").split())[:500]
                raise RuntimeError(f"No consent page at {page.url}: {text}")
            with page.expect_request(
                lambda r: r.url.startswith(redirect_prefix), timeout=timeout * 1000
            ):
                allow.click(no_wait_after=True)
        if not captured:
            text = " ".join(page.inner_text("body").split())[:500]
            raise RuntimeError(f"The sign-in led to {page.url}, not the callback: {text}")
        with contextlib.suppress(Exception):
            captured[0].response()
        with contextlib.suppress(Exception):
            page.wait_for_url(lambda u: not u.startswith(issuer), timeout=timeout * 1000)
        return captured[0].url
    finally:
        page.remove_listener("request", on_request)
