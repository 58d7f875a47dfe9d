"""The Connected accounts page: a person sees and disconnects their own connections; admins see
every member's and revoke any, audited; a member cannot revoke someone else's."""

import pytest
from django.urls import reverse

from accounts.models import Membership, User
from audit.models import AuditEvent
from connections.models import Connection, Provider
from dashboard.scoping import SESSION_KEY
from vault.crypto import encrypt

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(org):
    return Provider.objects.create(
        organization=org,
        key="corp",
        name="Corp",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="cid",
    )


@pytest.fixture
def member(org):
    person = User.objects.create_user("member-page@example.com", "long enough password 5")
    Membership.objects.create(user=person, organization=org, role=Membership.MEMBER)
    return person


def sign_in(client, person, org) -> None:
    """Signed in, working on `org` (not the person's own organization)."""
    client.force_login(person)
    session = client.session
    session[SESSION_KEY] = org.pk
    session.save()


def connect(provider, person) -> Connection:
    return Connection.objects.create(
        provider=provider,
        organization=provider.organization,
        user=person,
        access_token_ciphertext=encrypt("t"),
        scopes=["read"],
    )


def test_a_member_sees_and_disconnects_their_own_connection(client, provider, member, org):
    mine = connect(provider, member)
    sign_in(client, member, org)
    page = client.get(reverse("dashboard:connected_accounts")).content.decode()
    assert "data-my-connections" in page and "Corp" in page
    assert "data-member-connections" not in page  # other people's are for admins
    client.post(reverse("dashboard:connection_revoke", args=[mine.pk]))
    assert not Connection.objects.filter(pk=mine.pk).exists()
    assert AuditEvent.objects.filter(
        organization_id=org.pk, action="connection.revoke", target_id=str(mine.pk)
    ).exists()


def test_a_member_cannot_revoke_someone_else_s_connection(client, provider, member, user, org):
    owners = connect(provider, user)
    sign_in(client, member, org)
    refused = client.post(reverse("dashboard:connection_revoke", args=[owners.pk]))
    assert refused.status_code == 403
    assert Connection.objects.filter(pk=owners.pk).exists()


def test_an_admin_sees_every_member_s_connection_and_revokes_it(client, provider, member, user):
    theirs = connect(provider, member)
    client.force_login(user)
    page = client.get(reverse("dashboard:connected_accounts")).content.decode()
    assert "data-member-connections" in page and member.email in page
    client.post(reverse("dashboard:connection_revoke", args=[theirs.pk]))
    assert not Connection.objects.filter(pk=theirs.pk).exists()


def test_an_admin_adds_a_provider_from_a_preset(client, user, org):
    client.force_login(user)
    client.post(
        reverse("dashboard:connected_accounts"),
        {
            "preset": "github",
            "client_id": "gh-id",
            "client_secret": "gh-secret",
            "account_mode": "per_user",
            "pkce": "on",
        },
    )
    provider = Provider.objects.get(organization=org, key="github")
    assert provider.authorization_url == "https://github.com/login/oauth/authorize"
    assert provider.client_secret() == "gh-secret"
    page = client.get(reverse("dashboard:connected_accounts")).content.decode()
    assert "gh-secret" not in page
