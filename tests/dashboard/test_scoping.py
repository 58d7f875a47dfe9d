import pytest

from accounts.models import Membership, Organization
from dashboard.scoping import SESSION_KEY

SERVER_PAGES = [
    "/servers/{slug}/",
    "/servers/{slug}/settings/",
    "/servers/{slug}/delete/",
    "/servers/{slug}/connect/",
    "/servers/{slug}/playground/",
    "/servers/{slug}/analytics/",
    "/servers/{slug}/tools/new/",
]


@pytest.mark.parametrize("url", SERVER_PAGES)
def test_an_outsider_gets_404_on_every_page_of_another_organizations_server(
    member_client, outsider_server, url
):
    response = member_client.get(url.format(slug=outsider_server.slug))
    assert response.status_code == 404


def test_an_outsider_cannot_post_to_another_organizations_server(member_client, outsider_server):
    tool = outsider_server.tools.create(name="t", description="d", input_schema={"type": "object"})
    urls = [
        f"/servers/{outsider_server.slug}/delete/",
        f"/servers/{outsider_server.slug}/status/",
        f"/servers/{outsider_server.slug}/playground/key/",
        f"/servers/{outsider_server.slug}/tools/{tool.pk}/toggle/",
        f"/servers/{outsider_server.slug}/tools/{tool.pk}/delete/",
    ]
    for url in urls:
        assert member_client.post(url, {"confirm_slug": outsider_server.slug}).status_code == 404
    outsider_server.refresh_from_db()
    tool.refresh_from_db()
    assert tool.enabled
    assert not outsider_server.api_keys.exists()


def test_a_tool_of_my_server_addressed_through_it_but_belonging_elsewhere_is_404(
    member_client, server, outsider_server
):
    foreign = outsider_server.tools.create(
        name="t", description="d", input_schema={"type": "object"}
    )
    assert member_client.get(f"/servers/{server.slug}/tools/{foreign.pk}/").status_code == 404


def test_switching_to_an_organization_i_am_not_in_is_404(member_client, outsider_org):
    response = member_client.post("/organizations/switch/", {"organization": outsider_org.slug})
    assert response.status_code == 404
    assert member_client.session.get(SESSION_KEY) != outsider_org.pk


def test_switching_organizations_scopes_the_following_pages(member_client, user, org):
    team = Organization.objects.create(name="Team Rocket", slug="team-rocket")
    Membership.objects.create(organization=team, user=user, role=Membership.MEMBER)
    team.servers.create(slug="team-server", name="Team server")
    org.servers.create(slug="personal-server", name="Personal server")

    response = member_client.post("/organizations/switch/", {"organization": team.slug})
    assert response.status_code == 302
    page = member_client.get("/servers/").content.decode()
    assert "Team server" in page
    assert "Personal server" not in page


def test_opening_a_server_of_another_of_my_organizations_makes_it_current(member_client, user, org):
    team = Organization.objects.create(name="Team", slug="team")
    Membership.objects.create(organization=team, user=user)
    team.servers.create(slug="team-server", name="Team server")
    assert member_client.get("/servers/team-server/").status_code == 200
    assert member_client.session[SESSION_KEY] == team.pk


def test_pages_need_a_login(client, server):
    response = client.get("/servers/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_the_404_page_does_not_say_whether_the_server_exists(member_client, outsider_server):
    theirs = member_client.get(f"/servers/{outsider_server.slug}/").content
    nobodys = member_client.get("/servers/no-such-server/").content
    assert theirs == nobodys
    assert b"Page not found" in theirs
