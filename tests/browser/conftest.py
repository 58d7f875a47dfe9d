"""Browser tests: Playwright driving Debian's Chromium against a live uvicorn (tests/conftest.py's
`asgi_server`) on the test database. Rows are created through the pages, so they are committed."""

import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def dashboard_server(live_database):
    """The live server with the dashboard's CSP middleware on (see csp_settings.py)."""
    from django.conf import settings

    from tests.conftest import LiveServer

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("browser tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(
        live_database, extra_env={"DJANGO_SETTINGS_MODULE": "tests.browser.csp_settings"}
    )
    yield server
    server.stop()


@pytest.fixture(scope="package")
def browser(dashboard_server):
    # The live server (and its test database) must exist before Playwright starts: Playwright's
    # sync API keeps an event loop in this thread, where Django refuses synchronous queries.
    if not shutil.which(CHROMIUM):
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def track_errors(page):
    """Collect a page's script errors and console errors in page.errors."""
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on(
        "console",
        lambda msg: (
            page.errors.append(f"{msg.text} {msg.location.get('url', '')}")
            if msg.type == "error"
            else None
        ),
    )


@pytest.fixture
def new_page(browser, dashboard_server):
    """Pages in fresh browser contexts (one per person), pointed at the live server."""
    contexts = []

    def make():
        context = browser.new_context(
            base_url=dashboard_server.url, viewport={"width": 1360, "height": 900}
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        context.on("page", track_errors)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def db_call(committed):
    """Run a committed ORM call from a worker thread, away from Playwright's event loop."""
    from concurrent.futures import ThreadPoolExecutor

    def call(fn, *args, **kwargs):
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(committed, fn, *args, **kwargs).result()

    return call


@pytest.fixture
def shoot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name: str):
        # A viewport as tall as the page, so sticky bars sit where a reader expects them.
        size = page.viewport_size
        height = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": size["width"], "height": max(height, size["height"])})
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
        page.set_viewport_size(size)

    return take
