"""Each family of control-plane change and security event leaves one audit row naming who
did it, from where, to what, and what changed, and no secret value ever reaches a row."""

import pytest
from django.test import Client

from accounts import services
from accounts.models import Membership, User
from audit.context import acting, user_actor
from audit.models import AuditEvent
from oauth.clients import client_register
from oauth.grants import grant_create, grant_revoke
from oauth.metadata import resource_uri
from servers.models import Server
from servers.publishing import publish, rollback
from tests.api.conftest import ECHO, client_for
from vault.models import Secret

pytestmark = pytest.mark.django_db


def rows(org, action):
    return list(AuditEvent.objects.filter(organization_id=org.pk, action=action).order_by("id"))


def only(org, action):
    (row,) = rows(org, action)
    return row


@pytest.fixture
def api(user):
    client = client_for(user)
    client.defaults["REMOTE_ADDR"] = "203.0.113.9"
    return client


def test_servers_and_their_tools_are_recorded_with_the_token_that_changed_them(api, user, org):
    assert api.post("/api/servers/", {"slug": "files", "name": "files"}).status_code == 201
    created = only(org, "server.create")
    assert (created.actor_type, created.address) == ("token", "203.0.113.9")
    assert created.actor_label == f"tests ({user.email})"
    assert (created.target_type, created.target_label) == ("server", "files")
    assert created.diff["after"]["slug"] == "files"

    api.patch("/api/servers/files/", {"title": "Files!"}, format="json")
    updated = only(org, "server.update")
    assert updated.diff == {"before": {"title": ""}, "after": {"title": "Files!"}}

    tool = {**ECHO, "name": "echo"}
    made = api.post("/api/servers/files/tools/", tool, format="json")
    assert made.status_code == 201
    assert only(org, "tool.create").target_label == "echo"
    api.patch(
        f"/api/servers/files/tools/{made.json()['id']}/",
        {"description": "Echo back."},
        format="json",
    )
    assert only(org, "tool.update").diff["after"] == {"description": "Echo back."}

    assert api.delete("/api/servers/files/").status_code == 204
    assert only(org, "server.delete").diff["before"]["slug"] == "files"
    assert only(org, "tool.delete").target_label == "echo"  # parts go with their server


def test_publish_and_rollback_are_recorded_with_versions(user, org):
    server = Server.objects.create(organization=org, slug="pub", name="pub")
    with acting(user_actor(user, "198.51.100.1")):
        publish(server, user=user)
        publish(server, user=user)
        rollback(server, "1.0.0", user=user)
    assert [r.diff["after"]["version"] for r in rows(org, "server.publish")] == ["1.0.0", "1.0.1"]
    back = only(org, "server.rollback")
    assert back.diff == {"after": {"version": "1.0.2"}, "detail": {"restored": "1.0.0"}}
    assert (back.actor_label, back.address) == (user.email, "198.51.100.1")


def test_keys_are_recorded_when_issued_rescoped_and_revoked_never_with_their_digest(api, org):
    Server.objects.create(organization=org, slug="weather", name="weather")
    created = api.post("/api/keys/", {"name": "ci"}, format="json").json()
    issued = only(org, "api_key.create")
    assert issued.target_label.startswith("ci (")
    assert "digest" not in issued.diff["after"]
    api.patch(f"/api/keys/{created['id']}/", {"servers": ["weather"]}, format="json")
    assert rows(org, "api_key.rescope")
    assert api.delete(f"/api/keys/{created['id']}/").status_code == 204
    revoked = rows(org, "api_key.revoke") or rows(org, "api_key.delete")
    assert revoked and revoked[0].actor_type == "token"
    recorded = AuditEvent.objects.filter(organization_id=org.pk).values_list("diff", flat=True)
    assert created["key"] not in str(list(recorded))


def test_secrets_are_recorded_when_set_and_rotated_without_their_values(api, org):
    created = api.post("/api/secrets/", {"name": "WEATHER_TOKEN", "value": "s3cr3t-live-1"})
    api.patch(f"/api/secrets/{created.json()['id']}/", {"value": "s3cr3t-live-2"})
    assert only(org, "secret.create").target_label == "WEATHER_TOKEN"
    assert only(org, "secret.rotate").actor_type == "token"
    renamed = Secret.objects.get(pk=created.json()["id"])
    renamed.name = "WEATHER_KEY"  # no new value: an update, not a rotation
    renamed.save()
    assert only(org, "secret.update").diff == {
        "before": {"name": "WEATHER_TOKEN"},
        "after": {"name": "WEATHER_KEY"},
    }
    # A value pasted into a config elsewhere is masked too.
    api.post("/api/servers/", {"slug": "leaky", "name": "leaky", "title": "s3cr3t-live-2"})
    everything = str(
        list(AuditEvent.objects.filter(organization_id=org.pk).values_list("diff", "target_label"))
    )
    assert "s3cr3t" not in everything
    assert only(org, "server.create").diff["after"]["title"] == "***"


def test_credential_like_fields_are_redacted_in_diffs(org):
    Server.objects.create(
        organization=org, slug="h", name="h", http={"headers": {"Authorization": "Bearer abc123"}}
    )
    row = only(org, "server.create")
    assert row.diff["after"]["http"]["headers"]["Authorization"] == "***"
    assert "abc123" not in str(row.diff)


def test_membership_changes_are_recorded_by_the_services(user, org, outsider):
    with acting(user_actor(user, "192.0.2.4")):
        invitation = services.membership_invite(
            actor=user, organization=org, email=outsider.email, role=Membership.MEMBER
        )
    invite = only(org, "member.invite")
    assert (invite.actor_label, invite.target_label, invite.diff["after"]["role"]) == (
        user.email,
        outsider.email,
        "member",
    )
    with acting(user_actor(outsider)):
        membership = services.invitation_accept(user=outsider, invitation=invitation)
    assert only(org, "member.accept").actor_label == outsider.email
    with acting(user_actor(user)):
        services.membership_change_role(actor=user, membership=membership, role="admin")
        services.membership_remove(actor=user, membership=membership)
    assert only(org, "member.role_change").diff == {
        "before": {"role": "member"},
        "after": {"role": "admin"},
    }
    assert only(org, "member.remove").target_label == outsider.email


def test_organization_settings_are_recorded(client, user, org):
    client.force_login(user)
    client.post("/organization/", {"name": "Renamed"})
    assert only(org, "organization.update").diff["after"] == {"name": "Renamed"}
    client.post("/organization/", {"retention_days": "9"})
    assert only(org, "organization.settings").diff["after"] == {"callLogRetentionDays": 9}


def test_logins_and_failed_logins_are_recorded_with_the_address(user):
    client = Client(REMOTE_ADDR="198.51.100.77")
    client.post("/login/", {"username": user.email, "password": "wrong password"})
    client.post("/login/", {"username": user.email, "password": "correct horse battery staple"})
    failed = AuditEvent.objects.get(action="auth.login_failed", target_label=user.email)
    assert (failed.target_label, failed.address, failed.actor_label) == (
        user.email,
        "198.51.100.77",
        "anonymous",
    )
    assert "wrong password" not in str(failed.diff)
    login = AuditEvent.objects.get(action="auth.login", actor_label=user.email)
    assert (login.actor_label, login.address) == (user.email, "198.51.100.77")


def test_oauth_grants_tokens_and_revocations_are_recorded(user, org):
    from oauth.tokens import tokens_issue

    server = Server.objects.create(organization=org, slug="o", name="o", auth_mode="oauth")
    app, _ = client_register(
        metadata={"redirect_uris": ["https://claude.ai/cb"], "client_name": "Claude"},
        source_ip=None,
    )
    with acting(user_actor(user)):
        grant = grant_create(
            user=user, server=server, client=app, scope="mcp", resource=resource_uri("o")
        )
    assert only(org, "oauth.grant").target_label == f"Claude ({user.email})"
    tokens_issue(grant=grant, client=app)
    issued = only(org, "oauth.token_issue")
    assert (issued.actor_type, issued.actor_label) == ("grant", f"Claude for {user.email}")
    grant_revoke(grant=grant, reason="disconnected")
    assert only(org, "oauth.grant_revoke").diff == {"detail": {"reason": "disconnected"}}


def test_every_chain_written_by_these_events_still_verifies(api, user, org):
    from audit.chain import verify

    api.post("/api/servers/", {"slug": "v", "name": "v"})
    api.delete("/api/servers/v/")
    User.objects.create_user("bob@example.com", "another fine password")
    assert verify(org.pk)[1] is None
    assert verify(None)[1] is None
