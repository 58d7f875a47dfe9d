"""SCIM settings over the API (api/views/scim.py): admins read and change them and make the
token, which is answered once."""

from accounts.models import Membership, User
from scim import tokens
from tests.api.conftest import client_for


def test_an_admin_makes_the_token_and_sets_the_mapping(api, org):
    made = api.post(f"/api/organizations/{org.slug}/scim/token/")
    assert made.status_code == 201
    raw = made.json()["token"]
    assert tokens.authenticate(f"Bearer {raw}").organization == org
    read = api.get(f"/api/organizations/{org.slug}/scim/").json()
    assert read["tokenPrefix"] == raw[:12] and raw not in str(read)
    assert read["endpoint"].endswith("/scim/v2")
    changed = api.patch(
        f"/api/organizations/{org.slug}/scim/",
        {"defaultRole": "viewer", "groupRoles": {"Eng": "admin"}},
    )
    assert changed.status_code == 200
    assert changed.json()["groupRoles"] == {"Eng": "admin"}
    refused = api.patch(f"/api/organizations/{org.slug}/scim/", {"groupRoles": {"Eng": "owner"}})
    assert refused.status_code == 400
    assert "groupRoles" in refused.json()["error"]["fields"]
    assert api.delete(f"/api/organizations/{org.slug}/scim/token/").status_code == 204
    assert tokens.authenticate(f"Bearer {raw}") is None


def test_a_member_may_not_and_an_outsider_sees_nothing(org, outsider_api):
    bob = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    assert client_for(bob).post(f"/api/organizations/{org.slug}/scim/token/").status_code == 403
    assert outsider_api.get(f"/api/organizations/{org.slug}/scim/").status_code == 404
    assert outsider_api.get("/api/organizations/no-such-org/scim/").status_code == 404


def test_removing_a_member_through_the_api_deprovisions_them(api, org):
    from accounts.models import ApiKey

    bob = User.objects.create_user("bob@example.com", "a long enough password")
    membership = Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    key, _ = ApiKey.issue(org, "bob's", created_by=bob)
    listed = api.get(f"/api/organizations/{org.slug}/members/").json()
    assert {m["email"] for m in listed} == {"alice@example.com", "bob@example.com"}
    assert (
        client_for(bob)
        .delete(f"/api/organizations/{org.slug}/members/{listed[0]['id']}/")
        .status_code
        == 403
    )  # a member may not remove the owner
    assert api.delete(f"/api/organizations/{org.slug}/members/{membership.pk}/").status_code == 204
    assert not Membership.objects.filter(pk=membership.pk).exists()
    from audit.models import AuditEvent

    removals = AuditEvent.objects.filter(organization_id=org.pk, action="member.deprovision")
    assert removals.filter(target_label=bob.email).exists()
    owner = Membership.objects.get(organization=org, role="owner")
    last = api.delete(f"/api/organizations/{org.slug}/members/{owner.pk}/")
    assert last.status_code == 400
    key.refresh_from_db()
    assert key.revoked_at is None  # suspended, not revoked: a removal is not a deletion
