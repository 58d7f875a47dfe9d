"""Pages show only the controls the role may use (accounts.policy decides; the views refuse the
rest anyway, see tests/accounts/test_role_matrix.py)."""

from accounts.models import ApiKey, Membership, User
from dashboard.scoping import SESSION_KEY
from vault.models import Secret


def as_role(client, org, role):
    person = User.objects.create_user(f"{role}@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=person, role=role)
    client.force_login(person)
    session = client.session
    session[SESSION_KEY] = org.pk
    session.save()
    return person


def test_a_viewer_sees_secrets_and_keys_without_write_controls(client, org, user):
    secret = Secret.store(org, "TOKEN", "v")
    key = ApiKey.issue(org, "owners", created_by=user)[0]
    as_role(client, org, "viewer")
    secrets = client.get("/secrets/").content.decode()
    assert "TOKEN" in secrets
    assert f"/secrets/{secret.pk}/delete/" not in secrets
    assert 'id="secret-form"' not in secrets
    keys = client.get("/keys/").content.decode()
    assert "owners" in keys
    assert f"/keys/{key.pk}/revoke/" not in keys


def test_a_member_sees_revoke_on_their_own_keys_only(client, org, user):
    theirs = ApiKey.issue(org, "owners", created_by=user)[0]
    member = as_role(client, org, "member")
    mine = ApiKey.issue(org, "mine", created_by=member)[0]
    keys = client.get("/keys/").content.decode()
    assert f"/keys/{mine.pk}/revoke/" in keys
    assert f"/keys/{theirs.pk}/revoke/" not in keys


def test_an_admin_sees_every_control(client, org, user):
    secret = Secret.store(org, "TOKEN", "v")
    key = ApiKey.issue(org, "owners", created_by=user)[0]
    as_role(client, org, "admin")
    assert f"/secrets/{secret.pk}/delete/" in client.get("/secrets/").content.decode()
    assert f"/keys/{key.pk}/revoke/" in client.get("/keys/").content.decode()
