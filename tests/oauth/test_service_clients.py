"""Client credentials for service accounts (oauth/service_clients.py): admins create them (the
secret shown once, a digest kept; or public keys for private_key_jwt) in the dashboard and the
API; the token endpoint's client_credentials grant refuses what the RFCs say it must."""

import time
import uuid
from types import SimpleNamespace

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from accounts.models import Membership, User
from accounts.service_accounts import service_account_create, service_account_set_disabled
from audit.models import AuditEvent
from oauth import metadata
from oauth.models import AccessToken, Client, Grant, digest_token
from oauth.service_clients import service_client_create, service_client_delete
from servers.definition import import_definition
from tests.api.conftest import client_for
from tests.gateway.endpoint.conftest import server_definition


@pytest.fixture
def world(db):
    owner = User.objects.create_user("ops@acme.example", "long enough password 1")
    org = owner.personal_organization()
    member = User.objects.create_user("dev@acme.example", "long enough password 2")
    Membership.objects.create(user=member, organization=org, role="member")
    server = import_definition(server_definition("acme-cc", auth="oauth"), org)
    stranger = User.objects.create_user("x@other.example", "long enough password 3")
    other = import_definition(
        server_definition("other-cc", auth="oauth"), stranger.personal_organization()
    )
    account = service_account_create(actor=owner, organization=org, name="CI", role="admin")
    client, secret = service_client_create(actor=owner, account=account, name="CI runner")
    return SimpleNamespace(
        owner=owner,
        member=member,
        org=org,
        server=server,
        other=other,
        account=account,
        client=client,
        secret=secret,
        resource=metadata.resource_uri(server.slug),
    )


def token(client, world, **form):
    body = {
        "grant_type": "client_credentials",
        "resource": world.resource,
        "client_id": world.client.client_id,
        "client_secret": world.secret,
        **form,
    }
    return client.post("/oauth/token", {k: v for k, v in body.items() if v is not None})


def test_client_credentials_issue_a_token_acting_as_the_service_account(client, world):
    response = token(client, world)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["scope"], "refresh_token" in body) == ("mcp", False)
    grant = AccessToken.objects.get(digest=digest_token(body["access_token"])).grant
    assert (grant.service_account, grant.user, grant.source) == (
        world.account,
        None,
        Grant.CLIENT_CREDENTIALS,
    )
    assert world.client.secret_digest == digest_token(world.secret)  # only a digest is kept


def test_basic_authentication_works_as_well(client, world):
    import base64

    basic = base64.b64encode(f"{world.client.client_id}:{world.secret}".encode()).decode()
    response = client.post(
        "/oauth/token",
        {"grant_type": "client_credentials", "resource": world.resource, "scope": "mcp:read"},
        HTTP_AUTHORIZATION=f"Basic {basic}",
    )
    assert response.status_code == 200
    assert response.json()["scope"] == "mcp:read"


def test_a_wrong_secret_is_invalid_client(client, world):
    response = token(client, world, client_secret="gmcp_cs_nope")
    assert (response.status_code, response.json()["error"]) == (401, "invalid_client")


def test_a_server_of_another_organization_is_invalid_target(client, world):
    response = token(client, world, resource=metadata.resource_uri(world.other.slug))
    assert (response.status_code, response.json()["error"]) == (400, "invalid_target")


def test_a_missing_resource_is_invalid_target(client, world):
    response = token(client, world, resource=None)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_target")


def test_unknown_scopes_alone_are_invalid_scope(client, world):
    response = token(client, world, scope="admin")
    assert (response.status_code, response.json()["error"]) == (400, "invalid_scope")


def test_a_disabled_account_gets_no_token(client, world):
    service_account_set_disabled(actor=world.owner, account=world.account, disabled=True)
    response = token(client, world)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


def test_a_registered_client_may_not_use_client_credentials(client, world):
    registered = client.post(
        "/oauth/register",
        {
            "client_name": "dcr",
            "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
            "token_endpoint_auth_method": "client_secret_post",
        },
        content_type="application/json",
    ).json()
    response = token(
        client,
        world,
        client_id=registered["client_id"],
        client_secret=registered["client_secret"],
    )
    assert (response.status_code, response.json()["error"]) == (400, "unauthorized_client")


def test_deleting_the_credentials_revokes_their_tokens(client, world):
    assert token(client, world).status_code == 200
    grant = Grant.objects.get(client=world.client)
    service_client_delete(actor=world.owner, client=world.client)
    assert not Grant.objects.filter(pk=grant.pk).exists()
    assert not AccessToken.objects.filter(grant_id=grant.pk).exists()
    deleted = AuditEvent.objects.filter(organization_id=world.org.pk)
    assert deleted.filter(action="service_account.client_delete").exists()


def test_only_admins_create_client_credentials(world):
    from accounts.policy import PermissionDenied

    with pytest.raises(PermissionDenied):
        service_client_create(actor=world.member, account=world.account, name="mine")
    created = AuditEvent.objects.filter(organization_id=world.org.pk)
    assert created.filter(action="service_account.client_create").count() == 1


@pytest.fixture
def keyed(world):
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    client, secret = service_client_create(
        actor=world.owner,
        account=world.account,
        name="signed",
        jwks={"keys": [key.as_dict(private=False)]},
    )
    assert secret is None and client.token_endpoint_auth_method == "private_key_jwt"
    return SimpleNamespace(key=key, client=client)


def client_assertion(keyed, **claims):
    now = int(time.time())
    body = {
        "iss": keyed.client.client_id,
        "sub": keyed.client.client_id,
        "aud": metadata.issuer(),
        "iat": now,
        "exp": now + 120,
        "jti": uuid.uuid4().hex,
        **claims,
    }
    return jwt.encode({"alg": "RS256", "kid": "k1"}, body, keyed.key)


def signed_token(client, world, assertion):
    return client.post(
        "/oauth/token",
        {
            "grant_type": "client_credentials",
            "resource": world.resource,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        },
    )


def test_a_private_key_jwt_client_gets_a_token(client, world, keyed):
    response = signed_token(client, world, client_assertion(keyed))
    assert response.status_code == 200, response.content


def test_a_replayed_client_assertion_is_refused(client, world, keyed):
    assertion = client_assertion(keyed)
    assert signed_token(client, world, assertion).status_code == 200
    again = signed_token(client, world, assertion)
    assert (again.status_code, again.json()["error"]) == (401, "invalid_client")


def test_a_client_assertion_for_another_audience_is_refused(client, world, keyed):
    response = signed_token(client, world, client_assertion(keyed, aud="https://elsewhere"))
    assert (response.status_code, response.json()["error"]) == (401, "invalid_client")


def test_a_client_assertion_signed_by_another_key_is_refused(client, world, keyed):
    keyed = SimpleNamespace(key=RSAKey.generate_key(2048), client=keyed.client)
    response = signed_token(client, world, client_assertion(keyed))
    assert (response.status_code, response.json()["error"]) == (401, "invalid_client")


def test_a_private_jwks_is_refused(world):
    from django.core.exceptions import ValidationError

    key = RSAKey.generate_key(2048)
    with pytest.raises(ValidationError, match="public keys only"):
        service_client_create(
            actor=world.owner,
            account=world.account,
            name="x",
            jwks={"keys": [key.as_dict(private=True)]},
        )


def test_the_api_creates_lists_and_deletes_client_credentials(world):
    api = client_for(world.owner)
    url = f"/api/service-accounts/{world.account.pk}/clients/"
    created = api.post(url, {"name": "from the api"})
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["clientSecret"].startswith("gmcp_cs_")
    assert body["tokenEndpoint"] == metadata.endpoint("token")
    listed = api.get(url).json()
    assert {c["clientId"] for c in listed} == {world.client.client_id, body["clientId"]}
    assert all("clientSecret" not in c for c in listed)
    assert api.delete(f"{url}{body['clientId']}/").status_code == 204
    assert not Client.objects.filter(client_id=body["clientId"]).exists()


def test_members_cannot_see_client_credentials_over_the_api(world):
    api = client_for(world.member)
    assert api.get(f"/api/service-accounts/{world.account.pk}/clients/").status_code == 403


def test_the_dashboard_shows_the_secret_once(client, world):
    client.force_login(world.owner)
    page = client.post(
        f"/service-accounts/{world.account.pk}/clients/new/", {"name": "dashboard runner"}
    )
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    created = Client.objects.get(service_account=world.account, client_name="dashboard runner")
    html = page.content.decode()
    assert created.client_id in html and "gmcp_cs_" in html
    listing = client.get("/service-accounts/").content.decode()
    assert created.client_id in listing and "gmcp_cs_" not in listing


def test_a_private_key_jwt_client_revokes_its_token(client, world, keyed):
    issued = signed_token(client, world, client_assertion(keyed)).json()["access_token"]
    response = client.post(
        "/oauth/revoke",
        {
            "token": issued,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": client_assertion(keyed),
        },
    )
    assert response.status_code == 200
    assert AccessToken.objects.get(digest=digest_token(issued)).revoked_at is not None
