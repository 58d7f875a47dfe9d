from accounts.models import ApiKey, digest_key


def test_the_connect_page_shows_every_client(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/connect/").content.decode()
    for label in (
        "Claude Code",
        "Claude Desktop",
        "Cursor",
        "VS Code",
        "Windsurf",
        "Python SDK",
        "curl",
    ):
        assert label in page
    assert "claude mcp add --transport http weather" in page
    assert "/mcp/weather" in page


def test_the_connect_page_names_the_legacy_sse_endpoint_too(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/connect/").content.decode()
    assert "HTTP+SSE transport (2024-11-05" in page
    assert "/mcp/weather/sse</span>" in page


def test_creating_a_key_from_the_connect_page_fills_it_in_once(member_client, server):
    response = member_client.post(f"/servers/{server.slug}/connect/", {"name": "Cursor laptop"})
    raw = response.context["raw"]
    key = ApiKey.objects.get(organization=server.organization, name="Cursor laptop")
    assert key.digest == digest_key(raw)
    assert list(key.servers.all()) == [server]
    assert f"Bearer {raw}" in response.content.decode()
    assert raw not in member_client.get(f"/servers/{server.slug}/connect/").content.decode()


def test_only_keys_that_can_use_the_server_are_listed(member_client, org, server):
    other = org.servers.create(slug="other", name="Other")
    ApiKey.issue(org, "for-other", servers=[other])
    ApiKey.issue(org, "for-all")
    keys = member_client.get(f"/servers/{server.slug}/connect/").context["keys"]
    assert [k.name for k in keys] == ["for-all"]
