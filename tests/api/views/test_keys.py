from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey, digest_key
from api.models import PersonalAccessToken


def test_a_new_key_is_shown_once_and_stored_as_a_digest(api, org, server):
    response = api.post("/api/keys/", {"name": "ci", "servers": ["weather"]}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    raw = body["key"]
    assert raw.startswith("gmcp_") and raw.startswith(body["prefix"])
    assert (body["organization"], body["servers"], body["active"]) == (org.slug, ["weather"], True)

    key = ApiKey.objects.get(pk=body["id"])
    assert key.digest == digest_key(raw)
    assert raw not in api.get(f"/api/keys/{key.pk}/").content.decode()
    assert raw not in api.get("/api/keys/").content.decode()


def test_a_key_can_only_name_servers_of_its_organization(api, server, outsider_server):
    response = api.post(
        "/api/keys/", {"name": "x", "servers": ["weather", "secret-plans"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"servers": ["alice has no server 'secret-plans'"]}


def test_a_key_expiry_must_be_in_the_future(api, org):
    past = (timezone.now() - timedelta(days=1)).isoformat()
    response = api.post("/api/keys/", {"name": "x", "expiresAt": past}, format="json")
    assert response.json()["error"]["fields"] == {"expiresAt": ["must be in the future"]}


def test_a_key_is_renamed_rescoped_and_revoked(api, org, server):
    key, _ = ApiKey.issue(org, "old")
    patched = api.patch(f"/api/keys/{key.pk}/", {"name": "new", "servers": ["weather"]})
    assert patched.status_code == 200, patched.json()
    key.refresh_from_db()
    assert key.name == "new" and [s.slug for s in key.servers.all()] == ["weather"]

    assert api.delete(f"/api/keys/{key.pk}/").status_code == 204
    key.refresh_from_db()
    assert not key.is_active
    assert api.get(f"/api/keys/{key.pk}/").json()["active"] is False


def test_keys_are_filtered_by_organization(api, org, user, outsider_org):
    outsider_org.memberships.create(user=user, role="member")
    ApiKey.issue(org, "mine")
    ApiKey.issue(outsider_org, "shared")
    names = [k["name"] for k in api.get(f"/api/keys/?organization={org.slug}").json()["results"]]
    assert names == ["mine"]


def test_a_new_token_is_shown_once_and_works(api, user):
    response = api.post("/api/tokens/", {"name": "laptop"}, format="json")
    assert response.status_code == 201
    raw = response.json()["token"]
    token = PersonalAccessToken.objects.get(pk=response.json()["id"])
    assert token.user == user and token.digest == digest_key(raw)
    assert raw not in api.get("/api/tokens/").content.decode()

    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/tokens/").status_code == 200


def test_a_revoked_token_stops_working_at_once(api, user):
    mine = PersonalAccessToken.objects.get(user=user)
    assert api.delete(f"/api/tokens/{mine.pk}/").status_code == 204
    response = api.get("/api/tokens/")
    assert response.status_code == 401


def test_the_first_token_can_be_created_from_a_dashboard_session(client, user):
    client.force_login(user)
    response = client.post("/api/tokens/", {"name": "first"}, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["token"].startswith("gpat_")


def test_tokens_are_listed_per_user(api, outsider):
    PersonalAccessToken.issue(outsider, "theirs")
    assert [t["name"] for t in api.get("/api/tokens/").json()["results"]] == ["tests"]


def test_a_key_is_limited_to_chosen_tools_and_calls_per_minute(api, org, server):
    access = {"weather": {"tools": ["forecast"], "prompts": []}}
    limits = {"perMinute": 30, "tools": {"forecast": 5}}
    response = api.post(
        "/api/keys/", {"name": "narrow", "access": access, "limits": limits}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["access"], body["limits"]) == (access, limits)
    key = ApiKey.objects.get(pk=body["id"])
    assert key.access == {str(server.pk): {"tools": ["forecast"], "prompts": []}}

    widened = api.patch(f"/api/keys/{key.pk}/", {"access": {}}, format="json")
    assert widened.status_code == 200 and widened.json()["access"] == {}


def test_a_key_access_names_servers_of_its_organization_and_lists_of_names(
    api, server, outsider_server
):
    foreign = api.post(
        "/api/keys/", {"name": "x", "access": {"secret-plans": {"tools": []}}}, format="json"
    )
    assert foreign.json()["error"]["fields"] == {"access": ["alice has no server 'secret-plans'"]}
    malformed = api.post(
        "/api/keys/",
        {"name": "x", "access": {"weather": {"tools": "all"}}, "limits": {"perMinute": -1}},
        format="json",
    )
    assert set(malformed.json()["error"]["fields"]) == {"access", "limits"}
