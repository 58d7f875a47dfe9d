"""Live: no HTML error under /api/ or /mcp/, and security headers on every HTML page,
including the info page at /mcp/<slug> (served outside Django)."""

import httpx2
import pytest

from .conftest import static_tool

HTML = {"accept": "text/html"}


@pytest.mark.parametrize(
    "path",
    ["/api/nothing-here", "/api/servers/", "/mcp/", "/mcp/UPPER-case", "/mcp/x/unknown/route"],
)
def test_errors_under_api_and_mcp_are_json(asgi_server, path):
    response = httpx2.get(asgi_server.url + path, headers=HTML)
    assert response.status_code >= 400
    assert response.headers["content-type"].startswith("application/json"), response.text[:200]


def test_a_bad_host_under_api_is_json(asgi_server):
    response = httpx2.get(f"{asgi_server.url}/api/servers/", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")


def test_the_info_page_at_mcp_slug_carries_security_headers(asgi_server, attacker):
    tenant = attacker(tools=[static_tool("t", "x")])
    response = httpx2.get(
        asgi_server.mcp_url(tenant.slug),
        headers={**HTML, "authorization": f"Bearer {tenant.raw}"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert "script-src" not in policy  # no script may run at all
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize("path", ["/login/", "/signup/", "/admin/login/", "/api/docs/"])
def test_every_django_html_page_carries_them_too(asgi_server, path):
    response = httpx2.get(asgi_server.url + path, headers=HTML)
    assert response.status_code == 200, path
    assert response.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
