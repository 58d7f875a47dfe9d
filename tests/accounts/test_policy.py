"""accounts.policy, and the findings it fixes on each surface: a plain member could revoke the
owner's key, overwrite secrets, pause or delete servers (API and dashboard); a viewer could do
anything a member could. The full route x role matrix is in test_role_matrix.py."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts import policy
from accounts.models import ApiKey, Membership, User
from accounts.policy import Action
from dashboard.scoping import SESSION_KEY
from servers.models import Server
from tests.api.conftest import client_for
from vault.models import Secret


@pytest.fixture
def team(org, user):
    def join(email, role):
        person = User.objects.create_user(email, "a long enough password")
        Membership.objects.create(organization=org, user=person, role=role)
        return person

    return {
        "owner": user,
        "admin": join("admin@example.com", "admin"),
        "member": join("member@example.com", "member"),
        "viewer": join("viewer@example.com", "viewer"),
    }


@pytest.fixture
def owner_key(org, user):
    return ApiKey.issue(org, "owner's key", created_by=user)[0]


@pytest.fixture
def target(org):
    return Server.objects.create(organization=org, slug="prod", name="prod")


def dashboard_as(client, person, org):
    client.force_login(person)
    session = client.session
    session[SESSION_KEY] = org.pk
    session.save()
    return client


def test_the_table_orders_roles_and_lets_members_manage_only_their_own_keys(org, team):
    member, owner = team["member"], team["owner"]
    mine = ApiKey.issue(org, "mine", created_by=member)[0]
    theirs = ApiKey.issue(org, "theirs", created_by=owner)[0]
    assert policy.can(user=member, org=org, action=Action.KEY_MANAGE, obj=mine)
    assert not policy.can(user=member, org=org, action=Action.KEY_MANAGE, obj=theirs)
    assert policy.can(user=team["admin"], org=org, action=Action.KEY_MANAGE, obj=theirs)
    assert not policy.can(user=team["viewer"], org=org, action=Action.KEY_CREATE)
    assert not policy.can(user=team["viewer"], org=org, action=Action.KEY_MANAGE, obj=mine)
    for action in Action:
        assert policy.can(user=owner, org=org, action=action)
        assert policy.can(user=team["viewer"], org=org, action=action) == (action == Action.VIEW)


def test_an_outsider_is_told_nothing_exists_and_a_low_role_is_told_why(org, team, outsider):
    with pytest.raises(policy.NotFound):
        policy.require(user=outsider, org=org, action=Action.VIEW)
    with pytest.raises(policy.PermissionDenied, match="admin or above"):
        policy.require(user=team["member"], org=org, action=Action.SECRET_WRITE)


def test_a_member_cannot_revoke_the_owners_key_but_can_revoke_their_own(
    client, org, team, owner_key
):
    member = team["member"]
    api = client_for(member)
    refused = api.delete(f"/api/keys/{owner_key.pk}/")
    assert refused.status_code == 403
    assert "admin" in refused.json()["error"]["message"]
    assert (
        dashboard_as(client, member, org).post(f"/keys/{owner_key.pk}/revoke/").status_code == 403
    )
    owner_key.refresh_from_db()
    assert owner_key.revoked_at is None

    own = api.post("/api/keys/", {"name": "mine", "organization": org.slug}).json()
    assert api.delete(f"/api/keys/{own['id']}/").status_code == 204
    again = ApiKey.issue(org, "mine too", created_by=member)[0]
    assert client.post(f"/keys/{again.pk}/revoke/").status_code == 302
    assert not ApiKey.objects.filter(created_by=member, revoked_at=None).exists()


def test_a_member_cannot_overwrite_or_delete_secrets(client, org, team):
    secret = Secret.store(org, "TOKEN", "original")
    api = client_for(team["member"])
    assert api.patch(f"/api/secrets/{secret.pk}/", {"value": "mine now"}).status_code == 403
    assert api.delete(f"/api/secrets/{secret.pk}/").status_code == 403
    assert (
        api.post(
            "/api/secrets/", {"name": "OTHER", "value": "x", "organization": org.slug}
        ).status_code
        == 403
    )
    dash = dashboard_as(client, team["member"], org)
    assert dash.post("/secrets/", {"name": "TOKEN", "value": "mine now"}).status_code == 403
    assert dash.post(f"/secrets/{secret.pk}/delete/").status_code == 403
    secret.refresh_from_db()
    assert secret.reveal() == "original"


def test_a_member_cannot_pause_or_delete_a_server(client, org, team, target):
    api = client_for(team["member"])
    assert api.patch("/api/servers/prod/", {"status": "paused"}).status_code == 403
    assert api.delete("/api/servers/prod/").status_code == 403
    dash = dashboard_as(client, team["member"], org)
    assert dash.post("/servers/prod/status/", {"status": "paused"}).status_code == 403
    assert dash.post("/servers/prod/delete/", {"confirm_slug": "prod"}).status_code == 403
    target.refresh_from_db()
    assert target.status == Server.ACTIVE
    # An admin may.
    paused = client_for(team["admin"]).patch("/api/servers/prod/", {"status": "paused"})
    assert paused.status_code == 200


def test_a_viewer_reads_but_changes_nothing(client, org, team, target):
    api = client_for(team["viewer"])
    assert api.get("/api/servers/prod/").status_code == 200
    assert api.post("/api/servers/prod/tools/", {"name": "x"}).status_code == 403
    assert api.post("/api/keys/", {"name": "k", "organization": org.slug}).status_code == 403
    dash = dashboard_as(client, team["viewer"], org)
    assert dash.get("/servers/prod/").status_code == 200
    assert dash.post("/servers/prod/tools/new/", {"name": "x"}).status_code == 403


def test_the_commands_ask_the_same_policy(org, team, owner_key):
    with pytest.raises(CommandError, match="viewer"):
        call_command(
            "apikey", "create", "--owner", team["viewer"].email, "--org", org.slug, "--name", "k"
        )
    with pytest.raises(CommandError, match="admin or above"):
        call_command("apikey", "revoke", owner_key.prefix, "--owner", team["member"].email)
    owner_key.refresh_from_db()
    assert owner_key.revoked_at is None
    out = StringIO()
    call_command("apikey", "revoke", owner_key.prefix, "--owner", team["admin"].email, stdout=out)
    assert "Revoked" in out.getvalue()


def test_the_import_command_needs_the_right_role(tmp_path, org, team):
    definition = tmp_path / "s.yaml"
    definition.write_text("slug: from-cli\nname: from cli\n")
    with pytest.raises(CommandError, match="viewer"):
        call_command(
            "server", "import", str(definition), "--owner", team["viewer"].email, "--org", org.slug
        )
    call_command(
        "server",
        "import",
        str(definition),
        "--owner",
        team["member"].email,
        "--org",
        org.slug,
        stdout=StringIO(),
    )
    with pytest.raises(CommandError, match="admin or above"):
        call_command(
            "server",
            "import",
            str(definition),
            "--replace",
            "--owner",
            team["member"].email,
            "--org",
            org.slug,
        )
