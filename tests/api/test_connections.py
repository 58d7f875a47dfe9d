"""Connected accounts over the API: one's own, and for admins everyone's in the organization."""

from accounts.models import Membership, User
from audit.models import AuditEvent
from connections.models import Connection, Provider
from vault.crypto import encrypt

from .conftest import client_for


def _provider(org) -> Provider:
    return Provider.objects.create(
        organization=org,
        key="tracker",
        name="Tracker",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="c",
    )


def _connect(provider, user) -> Connection:
    return Connection.objects.create(
        provider=provider,
        organization=provider.organization,
        user=user,
        access_token_ciphertext=encrypt("upstream-token"),
        scopes=["issues:read"],
    )


def test_a_member_lists_and_revokes_only_their_own_connections(org, user):
    provider = _provider(org)
    bob = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    alices, bobs = _connect(provider, user), _connect(provider, bob)
    member = client_for(bob)

    listed = member.get("/api/connections/").json()
    rows = listed["results"]
    assert [(c["id"], c["person"], c["provider"]) for c in rows] == [
        (bobs.pk, "bob@example.com", "tracker")
    ]
    assert "upstream-token" not in str(listed)
    assert member.delete(f"/api/connections/{alices.pk}/").status_code == 403
    assert member.delete(f"/api/connections/{bobs.pk}/").status_code == 204
    assert list(Connection.objects.filter(provider=provider).values_list("pk", flat=True)) == [
        alices.pk
    ]


def test_an_admin_lists_every_member_s_connection_and_revokes_one(org, user):
    provider = _provider(org)
    bob = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    _connect(provider, user)
    bobs = _connect(provider, bob)
    admin = client_for(user)  # Alice owns the organization

    rows = admin.get("/api/connections/").json()["results"]
    assert sorted(c["person"] for c in rows) == ["alice@example.com", "bob@example.com"]
    assert admin.delete(f"/api/connections/{bobs.pk}/").status_code == 204
    assert not Connection.objects.filter(pk=bobs.pk).exists()
    event = AuditEvent.objects.get(action="connection.revoke", target_id=str(bobs.pk))
    assert "by an admin" in str(event.diff)
    assert "alice@example.com" in event.actor_label


def test_an_outsider_finds_no_connection(org, user, outsider):
    connection = _connect(_provider(org), user)
    assert client_for(outsider).get(f"/api/connections/{connection.pk}/").status_code == 404
    assert client_for(outsider).get("/api/connections/").json()["results"] == []
