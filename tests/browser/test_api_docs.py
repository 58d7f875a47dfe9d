"""/api/docs/ in Chromium with every request beyond the site refused: Swagger UI (from the
drf-spectacular-sidecar package, served by this site) renders the API's operations, with no
script error and nothing asked of another origin. Screenshots at 1280 and 390 px."""

from urllib.parse import urlsplit

from playwright.sync_api import expect

from .looks import OVERFLOW, WIDTHS, context_for, shoot


def test_the_api_docs_render_every_operation_with_no_network_beyond_the_site(
    browser, dashboard_server
):
    site = urlsplit(dashboard_server.url).netloc
    for width in WIDTHS:
        context = context_for(browser, dashboard_server.url, width, "light")
        elsewhere = []

        def only_the_site(route, request, elsewhere=elsewhere):
            if urlsplit(request.url).netloc == site or request.url.startswith("data:"):
                route.continue_()
            else:
                elsewhere.append(request.url)
                route.abort()

        context.route("**/*", only_the_site)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.on(
            "console",
            lambda msg, errors=errors: errors.append(msg.text) if msg.type == "error" else None,
        )
        response = page.goto("/api/docs/")
        assert response.status == 200
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("getmcp management API")
        operations = page.locator(".opblock")
        expect(operations.first).to_be_visible()
        assert operations.count() > 40
        expect(
            page.locator(".opblock-summary-path", has_text="/api/servers/{server_slug}/tools/bulk/")
        ).to_have_count(1)
        shoot(page, f"api-docs-{width}")
        if width == "1280":  # at 390 px the layout is Swagger UI's own, not the dashboard's
            assert page.evaluate(OVERFLOW)
        assert not elsewhere, elsewhere
        assert not errors, errors
        context.close()
