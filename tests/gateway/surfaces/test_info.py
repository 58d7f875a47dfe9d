from gateway.surfaces.info import info_page, server_info, wants_html

from .conftest import make_snapshot


def test_server_info_has_name_version_and_counts(snapshot):
    info = server_info(snapshot)
    assert info["name"] == "my-calculator"
    assert info["version"] == "2.1.0"
    assert (info["tools"], info["resources"], info["resourceTemplates"], info["prompts"]) == (
        2,
        1,
        0,
        1,
    )
    assert "2026-07-28" in info["protocolVersions"]
    assert "endpoints" not in info


def test_with_a_base_url_it_names_the_endpoints(snapshot):
    endpoints = server_info(snapshot, "https://getmcp.test/mcp/calc/")["endpoints"]
    assert endpoints["mcp"] == "https://getmcp.test/mcp/calc"
    assert endpoints["openapi"] == "https://getmcp.test/mcp/calc/openapi.json"
    assert endpoints["discovery"] == "https://getmcp.test/mcp/calc/.well-known/mcp.json"


def test_browsers_get_html_and_api_clients_get_json():
    assert wants_html("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    assert not wants_html("application/json")
    assert not wants_html("*/*")
    assert not wants_html(None)
    assert not wants_html("application/json, text/html")


def test_the_page_says_how_to_connect_and_escapes_what_users_wrote(snapshot):
    page = info_page(snapshot, "https://getmcp.test/mcp/calc")
    assert "https://getmcp.test/mcp/calc" in page
    assert "https://getmcp.test/mcp/calc/sse" in page
    assert "Streamable HTTP" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Calculator &lt;b&gt;&amp;&lt;/b&gt; friends" in page
    assert "Echo &lt;i&gt;a&lt;/i&gt; message." in page
    assert "Authorization" not in page  # this server needs no key


def test_the_page_tells_key_holders_how_to_authenticate():
    page = info_page(make_snapshot(auth="api_key"), "https://getmcp.test/mcp/calc")
    assert "Authorization: Bearer" in page
    assert "YOUR_API_KEY" in page


def test_a_hostile_url_cannot_break_out_of_the_page(snapshot):
    page = info_page(snapshot, 'https://x.test/mcp/calc"><script>bad()</script>')
    assert "<script>bad()" not in page
