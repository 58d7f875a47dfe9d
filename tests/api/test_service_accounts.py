"""Service accounts over the API: admins create them and their keys, keys say whom they act as,
and a key moves to a service account by its `serviceAccount` field."""

from accounts.models import ApiKey, Membership, ServiceAccount, User
from tests.api.conftest import client_for


def test_an_admin_creates_a_service_account_and_a_key_that_acts_as_it(api, org):
    made = api.post(
        "/api/service-accounts/", {"name": "CI", "role": "admin", "organization": org.slug}
    )
    assert made.status_code == 201, made.content
    assert made.json()["role"] == "admin" and made.json()["disabled"] is False
    key = api.post(f"/api/service-accounts/{made.json()['id']}/keys/", {"name": "deploy"})
    assert key.status_code == 201, key.content
    body = key.json()
    assert body["key"].startswith("gmcp_")
    assert body["principal"] == {"type": "service_account", "id": made.json()["id"], "name": "CI"}
    listed = api.get(f"/api/keys/{body['id']}/").json()
    assert listed["serviceAccount"] == made.json()["id"]


def test_a_personal_key_names_its_person(api, org, user):
    made = api.post("/api/keys/", {"name": "mine", "organization": org.slug})
    assert made.json()["principal"] == {"type": "person", "email": user.email}
    assert made.json()["serviceAccount"] is None


def test_a_member_may_not_create_service_accounts_or_move_their_key_to_one(org, user):
    bob = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    bob_api = client_for(bob)
    refused = bob_api.post("/api/service-accounts/", {"name": "x", "organization": org.slug})
    assert refused.status_code == 403
    account = ServiceAccount.objects.create(organization=org, name="CI")
    key, _ = ApiKey.issue(org, "bob's", created_by=bob)
    moved = bob_api.patch(f"/api/keys/{key.pk}/", {"serviceAccount": account.pk})
    assert moved.status_code == 403
    key.refresh_from_db()
    assert key.service_account is None


def test_an_admin_moves_a_key_to_a_service_account_and_back(api, org, user):
    account = ServiceAccount.objects.create(organization=org, name="CI")
    key, _ = ApiKey.issue(org, "alice's", created_by=user)
    moved = api.patch(f"/api/keys/{key.pk}/", {"serviceAccount": account.pk})
    assert moved.status_code == 200, moved.content
    assert moved.json()["principal"]["type"] == "service_account"
    back = api.patch(f"/api/keys/{key.pk}/", {"serviceAccount": None})
    assert back.json()["principal"] == {"type": "person", "email": user.email}


def test_an_outsider_sees_no_service_account_and_cannot_use_one_for_a_key(
    api, outsider_api, org, outsider_org
):
    account = ServiceAccount.objects.create(organization=org, name="CI")
    assert outsider_api.get(f"/api/service-accounts/{account.pk}/").status_code == 404
    assert outsider_api.get("/api/service-accounts/").json()["results"] == []
    theirs = ServiceAccount.objects.create(organization=outsider_org, name="theirs")
    refused = api.post(
        "/api/keys/", {"name": "k", "organization": org.slug, "serviceAccount": theirs.pk}
    )
    missing = api.post(
        "/api/keys/", {"name": "k", "organization": org.slug, "serviceAccount": 10**9}
    )
    # Another organization's account reads exactly like one that does not exist.
    assert refused.status_code == missing.status_code == 400
    assert refused.json() == missing.json()
    assert "no such service account" in refused.text


def test_deleting_a_service_account_revokes_its_keys_and_disabling_shows(api, org):
    account = api.post("/api/service-accounts/", {"name": "CI", "organization": org.slug}).json()
    key = api.post(f"/api/service-accounts/{account['id']}/keys/", {"name": "k"}).json()
    disabled = api.patch(f"/api/service-accounts/{account['id']}/", {"disabled": True})
    assert disabled.json()["disabled"] is True
    assert api.delete(f"/api/service-accounts/{account['id']}/").status_code == 204
    assert api.get(f"/api/keys/{key['id']}/").json()["active"] is False
