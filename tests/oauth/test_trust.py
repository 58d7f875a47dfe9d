"""Trusted identity providers (oauth/trust.py) through the dashboard and the API, the audit rows
they leave, the metadata advertising both machine grants, and the registration of a client that
only presents assertions."""

import pytest

from accounts.models import Membership, User
from audit.models import AuditEvent
from dashboard.scoping import SESSION_KEY
from oauth.models import TrustedIssuer
from tests.api.conftest import client_for

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture
def team(db):
    owner = User.objects.create_user("it@acme.example", "long enough password 1")
    member = User.objects.create_user("dev@acme.example", "long enough password 2")
    org = owner.personal_organization()
    Membership.objects.create(user=member, organization=org, role="member")
    return owner, member, org


def test_an_admin_trusts_a_provider_in_the_dashboard_and_it_is_audited(client, team):
    owner, _, org = team
    client.force_login(owner)
    response = client.post(
        "/identity-providers/",
        {
            "name": "Acme Okta",
            "issuer": "https://acme.okta.com",
            "jwks_url": "https://acme.okta.com/oauth2/v1/keys",
            "allowed_client_ids": "gmcp_client_a\ngmcp_client_b",
            "subject_mapping": "email",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content
    trust = TrustedIssuer.objects.get(organization=org)
    assert trust.allowed_client_ids == ["gmcp_client_a", "gmcp_client_b"]
    assert trust.audience == ""  # this authorization server's issuer
    assert AuditEvent.objects.filter(action="trusted_issuer.create", target_id=trust.pk).exists()
    page = client.get("/identity-providers/").content.decode()
    assert "https://acme.okta.com" in page


def test_a_jwks_url_must_be_https(client, team):
    owner, _, org = team
    client.force_login(owner)
    response = client.post(
        "/identity-providers/",
        {
            "name": "Plain",
            "issuer": "https://plain.example",
            "jwks_url": "http://plain.example/keys",
            "subject_mapping": "email",
        },
    )
    assert response.status_code == 200
    assert "An https URL." in response.content.decode()
    assert not TrustedIssuer.objects.filter(organization=org).exists()


def test_a_member_may_not_open_the_page(client, team):
    _, member, org = team
    client.force_login(member)
    session = client.session
    session[SESSION_KEY] = org.pk  # the team's organization, not their personal one
    session.save()
    assert client.get("/identity-providers/").status_code == 403


def test_the_api_manages_providers_and_members_only_read_them(team):
    owner, member, org = team
    api = client_for(owner)
    created = api.post(
        "/api/identity-providers/",
        {
            "organization": org.slug,
            "name": "Entra",
            "issuer": "https://login.microsoftonline.com/tenant/v2.0",
            "jwksUrl": "https://login.microsoftonline.com/tenant/discovery/v2.0/keys",
            "allowedClientIds": ["gmcp_client_x"],
        },
    )
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    assert created.json()["subjectMapping"] == "email"
    patched = api.patch(f"/api/identity-providers/{pk}/", {"enabled": False})
    assert (patched.status_code, patched.json()["enabled"]) == (200, False)
    reader = client_for(member)
    assert reader.get("/api/identity-providers/").json()["results"][0]["id"] == pk
    assert reader.patch(f"/api/identity-providers/{pk}/", {"enabled": True}).status_code == 403
    assert api.delete(f"/api/identity-providers/{pk}/").status_code == 204
    actions = set(AuditEvent.objects.filter(target_id=pk).values_list("action", flat=True))
    assert {"trusted_issuer.create", "trusted_issuer.update", "trusted_issuer.delete"} <= actions


def test_the_metadata_advertises_both_machine_grants(client):
    document = client.get("/.well-known/oauth-authorization-server").json()
    assert {JWT_BEARER, "client_credentials"} <= set(document["grant_types_supported"])
    assert "private_key_jwt" in document["token_endpoint_auth_methods_supported"]
    assert "RS256" in document["token_endpoint_auth_signing_alg_values_supported"]
    assert "HS256" not in document["token_endpoint_auth_signing_alg_values_supported"]


def test_a_client_that_only_presents_assertions_registers_without_redirect_uris(client, db):
    response = client.post(
        "/oauth/register",
        {"grant_types": [JWT_BEARER], "token_endpoint_auth_method": "client_secret_basic"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["client_secret"].startswith("gmcp_cs_")


def test_a_public_client_may_not_register_for_assertions(client, db):
    response = client.post(
        "/oauth/register",
        {"grant_types": [JWT_BEARER], "token_endpoint_auth_method": "none"},
        content_type="application/json",
    )
    assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")


def test_client_credentials_cannot_be_registered(client, db):
    response = client.post(
        "/oauth/register",
        {
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
        content_type="application/json",
    )
    assert (response.status_code, response.json()["error"]) == (400, "invalid_client_metadata")
