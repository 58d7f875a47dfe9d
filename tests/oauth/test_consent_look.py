"""The consent page's look in headless Chromium: at 1280 and 390 px, light and dark, it fits
(no sideways scrolling), its table of what is asked is laid out (labels beside values on a
desktop, above them on a phone), and the Allow and Deny buttons share the width.
Screenshots: test-artifacts/screenshots/look-consent-<width>-<scheme>.png."""

from tests.browser.looks import OVERFLOW, SCREENSHOTS, WIDTHS
from tests.conftest import free_port
from tests.oauth.conftest import PASSWORD, oauth_browser

from .test_consent_browser import authorize_url


async def test_the_consent_page_is_laid_out_at_both_widths_in_light_and_dark(oauth_live, person):
    from playwright.async_api import async_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=oauth_browser.CHROMIUM, args=oauth_browser.ARGS
        )
        try:
            for width, viewport in WIDTHS.items():
                for scheme in ("light", "dark"):
                    callback = f"http://127.0.0.1:{free_port()}/cb"
                    url = authorize_url(oauth_live, person.server.slug, callback)
                    context = await browser.new_context(viewport=viewport, color_scheme=scheme)
                    page = await context.new_page()
                    await page.goto(url)
                    await page.fill("input[name=username]", person.user.email)
                    await page.fill("input[name=password]", PASSWORD)
                    async with page.expect_navigation(url=lambda u: "/login/" not in u):
                        await page.click("button[type=submit]")
                    await page.wait_for_selector("[data-consent]")
                    assert await page.evaluate(OVERFLOW), (width, scheme)

                    label = await page.locator(".consent dt").first.bounding_box()
                    value = await page.locator(".consent dd").first.bounding_box()
                    if width == "1280":
                        assert value["x"] > label["x"] + label["width"] - 1  # side by side
                    else:
                        assert value["y"] >= label["y"] + label["height"] - 1  # stacked
                    allow = await page.locator("button[value=allow]").bounding_box()
                    deny = await page.locator("button[value=deny]").bounding_box()
                    assert abs(allow["width"] - deny["width"]) < 2 and allow["width"] > 100

                    background = await page.evaluate(
                        "getComputedStyle(document.querySelector('.consent dt')).backgroundColor"
                    )
                    card = await page.evaluate(
                        "getComputedStyle(document.querySelector('.auth-card')).backgroundColor"
                    )
                    assert background != card  # the labels are set apart
                    if scheme == "dark":
                        assert card != "rgb(255, 255, 255)"
                    await page.screenshot(
                        path=SCREENSHOTS / f"look-consent-{width}-{scheme}.png", full_page=True
                    )
                    await context.close()
        finally:
            await browser.close()
