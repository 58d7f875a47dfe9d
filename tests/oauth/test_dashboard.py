"""Connected apps in the dashboard, and the connect page of an OAuth server."""

from accounts.models import Membership, User
from oauth.clients import client_register
from oauth.grants import grant_create
from oauth.metadata import resource_uri
from oauth.models import Grant


def grant_for(user, server, name="Claude"):
    client, _ = client_register(
        metadata={
            "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
            "client_name": name,
        },
        source_ip=None,
    )
    return grant_create(
        user=user, server=server, client=client, scope="mcp", resource=resource_uri(server.slug)
    )


def test_a_user_sees_and_revokes_their_connected_apps(client, owner, oauth_server):
    grant = grant_for(owner, oauth_server)
    client.force_login(owner)
    page = client.get("/account/connected-apps/").content.decode()
    assert "Claude" in page and oauth_server.slug in page and "Never" in page
    response = client.post(f"/account/connected-apps/{grant.pk}/revoke/")
    assert response.status_code == 302
    grant.refresh_from_db()
    assert grant.revoked_at is not None


def test_an_admin_sees_every_grant_of_the_organization_and_can_revoke_it(
    client, owner, oauth_server
):
    teammate = User.objects.create_user("mate@example.com", "long enough password 4")
    Membership.objects.create(
        organization=oauth_server.organization, user=teammate, role=Membership.MEMBER
    )
    grant = grant_for(teammate, oauth_server, name="ChatGPT")
    client.force_login(owner)
    client.post("/organizations/switch/", {"organization": oauth_server.organization.slug})
    page = client.get("/account/connected-apps/").content.decode()
    assert "ChatGPT" in page and "mate@example.com" in page
    assert client.post(f"/account/connected-apps/{grant.pk}/revoke/").status_code == 302
    assert Grant.objects.get(pk=grant.pk).revoked_at is not None


def test_a_member_cannot_see_or_revoke_a_teammates_grant(client, owner, oauth_server):
    teammate = User.objects.create_user("mate@example.com", "long enough password 4")
    Membership.objects.create(
        organization=oauth_server.organization, user=teammate, role=Membership.MEMBER
    )
    grant = grant_for(owner, oauth_server, name="Owner's app")
    client.force_login(teammate)
    page = client.get("/account/connected-apps/").content.decode()
    assert "Owner&#x27;s app" not in page
    assert client.post(f"/account/connected-apps/{grant.pk}/revoke/").status_code == 404
    assert Grant.objects.get(pk=grant.pk).revoked_at is None


def test_an_outsider_cannot_revoke_a_grant(client, oauth_server, owner):
    grant = grant_for(owner, oauth_server)
    outsider = User.objects.create_user("out@example.net", "long enough password 5")
    client.force_login(outsider)
    assert client.post(f"/account/connected-apps/{grant.pk}/revoke/").status_code == 404


def test_the_connect_page_of_an_oauth_server_explains_the_oauth_clients(
    client, owner, oauth_server
):
    client.force_login(owner)
    page = client.get(f"/servers/{oauth_server.slug}/connect/").content.decode()
    assert "claude.ai" in page and "Claude Desktop" in page and "ChatGPT" in page
    assert "data-oauth-help" in page
    assert "YOUR_API_KEY" not in page
    assert f"/.well-known/oauth-protected-resource/mcp/{oauth_server.slug}" in page


def test_the_connect_page_of_a_key_server_does_not_mention_oauth(client, owner):
    from servers.definition import import_definition
    from tests.gateway.endpoint.conftest import server_definition

    server = import_definition(server_definition("keyed"), owner.personal_organization())
    client.force_login(owner)
    page = client.get(f"/servers/{server.slug}/connect/").content.decode()
    assert "data-oauth-help" not in page
    assert "YOUR_API_KEY" in page


def test_a_user_limits_what_a_connected_app_may_use(
    client, owner, oauth_server, django_capture_on_commit_callbacks
):
    from infra.redis import sync_client
    from oauth.models import AccessToken
    from oauth.tokens import tokens_issue
    from servers.models import Tool

    Tool.objects.create(
        server=oauth_server,
        name="search",
        description="Search.",
        input_schema={"type": "object"},
        config={"content": [{"type": "text", "text": "found"}]},
    )
    grant = grant_for(owner, oauth_server)
    tokens_issue(grant=grant, client=grant.client)
    digest = AccessToken.objects.get(grant=grant).digest
    client.force_login(owner)
    page = client.get(f"/account/connected-apps/{grant.pk}/access/").content.decode()
    assert f"{oauth_server.pk}|tools|search" in page

    before = sync_client().get(f"mcp:gen:key:{digest}")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/account/connected-apps/{grant.pk}/access/",
            {"items": [f"{oauth_server.pk}|tools|search"], "per_minute": "12"},
        )
    assert response.status_code == 302
    grant.refresh_from_db()
    assert (grant.access, grant.limits) == ({"tools": ["search"]}, {"perMinute": 12})
    # Its tokens' cached credentials are dropped on every worker at the next request.
    assert sync_client().get(f"mcp:gen:key:{digest}") != before
