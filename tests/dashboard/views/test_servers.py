import re
from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey
from activity.models import CallLog
from servers.models import Server


def log_call(server, at=None, **extra):
    return CallLog.objects.create(
        at=at or timezone.now(),
        organization=server.organization,
        server=server,
        server_slug=server.slug,
        method="tools/call",
        tool="echo",
        **extra,
    )


def test_an_empty_organization_is_told_how_to_start(member_client):
    page = member_client.get("/servers/").content.decode()
    assert "Create your first MCP server" in page
    assert 'href="/servers/new/"' in page


def test_the_list_shows_status_and_calls_today(member_client, server):
    log_call(server)
    log_call(server)
    log_call(server, at=timezone.now() - timedelta(days=2))
    response = member_client.get("/servers/")
    rows = dict(response.context["rows"])
    assert rows[server] == 2
    assert "Active" in response.content.decode()


def test_creating_a_server_puts_it_in_the_current_organization(member_client, org):
    response = member_client.post(
        "/servers/new/",
        {
            "name": "Docs",
            "slug": "docs",
            "title": "",
            "instructions": "",
            "auth_mode": "api_key",
            "status": "active",
            "allowed_origins": "https://app.example.com\n",
        },
    )
    assert response.status_code == 302
    server = Server.objects.get(slug="docs")
    assert server.organization == org
    assert server.allowed_origins == ["https://app.example.com"]


def test_a_bad_slug_and_origin_are_shown_next_to_their_fields(member_client):
    response = member_client.post(
        "/servers/new/",
        {
            "name": "Docs",
            "slug": "Not A Slug",
            "auth_mode": "api_key",
            "status": "active",
            "allowed_origins": "app.example.com/path",
        },
    )
    assert response.status_code == 200
    form = response.context["form"]
    assert "slug" in form.errors and "allowed_origins" in form.errors
    assert 'id="id_slug_errors"' in response.content.decode()


def test_a_taken_slug_is_refused_even_if_another_organization_has_it(
    member_client, outsider_server
):
    response = member_client.post(
        "/servers/new/",
        {"name": "x", "slug": outsider_server.slug, "auth_mode": "none", "status": "active"},
    )
    assert response.context["form"].errors["slug"] == [
        f"“{outsider_server.slug}” is taken; pick another slug."
    ]


def test_saving_settings_keeps_the_servers_own_slug(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/settings/",
        {"name": "Renamed", "slug": server.slug, "auth_mode": "api_key", "status": "active"},
    )
    assert response.status_code == 302
    server.refresh_from_db()
    assert server.name == "Renamed"


def test_editing_settings_saves_every_field(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/settings/",
        {
            "name": "Weather 2",
            "slug": "weather-two",
            "title": "Weather",
            "instructions": "Be brief",
            "auth_mode": "none",
            "status": "paused",
            "allowed_origins": "",
        },
    )
    assert response.status_code == 302
    server.refresh_from_db()
    assert (server.slug, server.auth_mode, server.status, server.instructions) == (
        "weather-two",
        "none",
        "paused",
        "Be brief",
    )


def test_every_auth_mode_can_be_chosen_in_the_settings(member_client, server):
    for mode in ("oauth", "api_key+oauth", "none", "api_key"):
        response = member_client.post(
            f"/servers/{server.slug}/settings/",
            {"name": "W", "slug": server.slug, "auth_mode": mode, "status": "active"},
        )
        assert response.status_code == 302
        server.refresh_from_db()
        assert server.auth_mode == mode


def test_an_unknown_auth_mode_is_refused(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/settings/",
        {"name": "W", "slug": server.slug, "auth_mode": "password", "status": "active"},
    )
    assert "auth_mode" in response.context["form"].errors


def test_delete_needs_the_slug_typed(member_client, server):
    assert member_client.get(f"/servers/{server.slug}/delete/").status_code == 200
    response = member_client.post(f"/servers/{server.slug}/delete/", {"confirm_slug": "nope"})
    assert response.status_code == 400
    page = response.content.decode()
    # One explanation, next to the field, not a second one above the page.
    assert page.count("That is not the slug of this server.") == 1
    assert "message-error" not in page
    assert Server.objects.filter(pk=server.pk).exists()
    response = member_client.post(f"/servers/{server.slug}/delete/", {"confirm_slug": server.slug})
    assert response.status_code == 302
    assert not Server.objects.filter(pk=server.pk).exists()


def test_the_detail_page_escapes_what_users_typed(member_client, server):
    server.tools.create(
        name="xss", description="<script>alert(1)</script>", input_schema={"type": "object"}
    )
    server.instructions = "<img src=x onerror=alert(2)>"
    server.save()
    page = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page


def test_a_slug_that_would_shadow_a_dashboard_page_is_refused(member_client):
    response = member_client.post(
        "/servers/new/", {"name": "x", "slug": "new", "auth_mode": "none", "status": "active"}
    )
    assert "reserved" in str(response.context["form"].errors["slug"])


def test_deleting_a_server_revokes_the_keys_limited_to_it_alone(member_client, org, server):
    other = Server.objects.create(organization=org, slug="other", name="Other")
    only_this, _ = ApiKey.issue(org, "only this", servers=[server])
    both, _ = ApiKey.issue(org, "both", servers=[server, other])
    every, _ = ApiKey.issue(org, "every server")

    response = member_client.post(
        f"/servers/{server.slug}/delete/", {"confirm_slug": server.slug}, follow=True
    )

    assert "1 key limited to it was revoked" in response.content.decode()
    for key in (only_this, both, every):
        key.refresh_from_db()
    # An empty server list means every server: the key must not widen when its server goes.
    assert only_this.revoked_at is not None and not only_this.is_active
    assert both.is_active and list(both.servers.all()) == [other]
    assert both.allows(other)
    assert every.is_active and every.allows(other)


def test_a_deleted_servers_only_key_no_longer_reaches_another_server(member_client, org, server):
    other = Server.objects.create(organization=org, slug="other", name="Other")
    key, _ = ApiKey.issue(org, "connect", servers=[server])
    member_client.post(f"/servers/{server.slug}/delete/", {"confirm_slug": server.slug})
    key.refresh_from_db()
    assert not (key.is_active and key.allows(other))


def test_the_detail_page_clamps_long_instructions(member_client, server):
    server.instructions = "Be brief. " * 3000
    server.save()
    page = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert '<p class="prewrap clamp-tall">Be brief.' in page


def test_the_breadcrumb_and_the_heading_both_use_the_title(member_client, server):
    server.title = "Weather for humans"
    server.save()
    for path in ("", "playground/", "settings/", "tools/new/"):
        page = member_client.get(f"/servers/{server.slug}/{path}").content.decode()
        crumbs = page.split('aria-label="Breadcrumb"', 1)[1].split("</nav>", 1)[0]
        assert "Weather for humans" in crumbs, path


def test_the_resources_stat_counts_resources_and_templates_apart(member_client, server):
    from servers.models import Resource, ResourceTemplate

    Resource.objects.create(server=server, uri="docs://a", name="a", text="A")
    for i in range(2):
        ResourceTemplate.objects.create(
            server=server, uri_template=f"notes://{i}/{{id}}", name=f"t{i}", text="T"
        )
    page = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert re.search(r'Resources</span><span class="stat-value">1<', page)
    assert re.search(r'Resource templates</span><span class="stat-value">2<', page)


def test_tools_that_run_as_tasks_are_marked_in_the_definition(member_client, server):
    from servers.models import Tool

    for name, execution in (("plain", {}), ("maybe", {"taskSupport": "optional"})):
        Tool.objects.create(server=server, name=name, description=name, execution=execution)
    Tool.objects.create(
        server=server, name="always", description="x", execution={"taskSupport": "required"}
    )
    page = member_client.get(f"/servers/{server.slug}/").content.decode()
    rows = {
        name: page.split(f'<span class="mono strong">{name}</span>', 1)[1].split("</div>", 1)[0]
        for name in ("plain", "maybe", "always")
    }
    assert "task" not in rows["plain"]
    assert ">task optional<" in rows["maybe"]
    assert ">task<" in rows["always"]
