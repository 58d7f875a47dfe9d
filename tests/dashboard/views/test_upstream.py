"""The dashboard's "Add tools from an upstream server" page, against a real upstream."""

from servers.models import Tool
from tests.servers.upstream.fixtures import free_port


def test_listing_an_upstream_then_ticking_tools_adds_them_as_upstream_tools(
    member_client, server, tool, upstream, loopback_allowed
):
    url = f"/servers/{server.slug}/upstream-tools/"
    assert member_client.get(url).status_code == 200
    listed = member_client.post(url, {"step": "list", "url": upstream.url})
    assert listed.status_code == 200
    assert "add" in [t["name"] for t in listed.context["offered"]]
    assert b'data-upstream-tool="count"' in listed.content
    assert Tool.objects.filter(server=server).count() == 1

    added = member_client.post(url, {"step": "add", "url": upstream.url, "tool": ["add", "count"]})
    assert added.status_code == 302
    rows = Tool.objects.filter(server=server, kind="upstream").order_by("position")
    assert [(r.name, r.config["tool"]) for r in rows] == [("add", "add"), ("count", "count")]
    # Its upstream is listed on the page from now on, to add more of its tools.
    page = member_client.get(url)
    assert [u["url"] for u in page.context["upstreams"]] == [upstream.url]


def test_an_unreachable_upstream_or_an_empty_pick_is_explained_not_a_500(
    member_client, server, upstream, loopback_allowed
):
    url = f"/servers/{server.slug}/upstream-tools/"
    down = member_client.post(url, {"step": "list", "url": f"http://127.0.0.1:{free_port()}/mcp"})
    assert down.status_code == 400
    assert "cannot be reached" in down.context["error"]
    nothing = member_client.post(url, {"step": "add", "url": upstream.url})
    assert nothing.status_code == 400
    assert "Tick at least one tool" in nothing.context["error"]
    bad_headers = member_client.post(url, {"step": "list", "url": upstream.url, "headers": "[1]"})
    assert bad_headers.status_code == 400
    assert not Tool.objects.filter(server=server).exists()


def test_an_outsider_cannot_add_tools_to_my_server(client, outsider, server):
    client.force_login(outsider)
    response = client.post(f"/servers/{server.slug}/upstream-tools/", {"url": "http://x"})
    assert response.status_code == 404
