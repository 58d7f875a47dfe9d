"""The token endpoint's jwt-bearer grant with an ID-JAG (SEP-990): an assertion signed by a
trusted identity provider (its JWKS fetched over HTTP on loopback) yields a token acting as the
member it names; every way an assertion can be wrong is refused with the RFC's error code."""

from types import SimpleNamespace

import pytest
from joserfc.jwk import RSAKey

from accounts.models import Membership, User
from oauth import assertions, metadata
from oauth.models import AccessToken, Grant, TrustedIssuer, digest_token
from oauth.trust import trusted_issuer_create, trusted_issuer_update
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition
from tests.oauth.identity_provider import IdentityProvider

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture(autouse=True)
def _loopback_jwks(settings):
    settings.OAUTH_JWKS_ALLOW_HTTP_LOOPBACK = True
    assertions.jwks_cache.clear()
    yield
    assertions.jwks_cache.clear()


@pytest.fixture
def idp():
    provider = IdentityProvider()
    yield provider
    provider.stop()


def register_confidential(client, name="Enterprise agent") -> dict:
    response = client.post(
        "/oauth/register",
        {
            "client_name": name,
            "grant_types": [JWT_BEARER],
            "token_endpoint_auth_method": "client_secret_post",
        },
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def world(db, client, idp):
    owner = User.objects.create_user("boss@acme.example", "long enough password 1")
    org = owner.personal_organization()
    member = User.objects.create_user("dev@acme.example", "long enough password 2")
    Membership.objects.create(user=member, organization=org, role="member")
    server = import_definition(server_definition("acme-tools", auth="oauth"), org)
    stranger = User.objects.create_user("else@other.example", "long enough password 3")
    other_server = import_definition(
        server_definition("other-tools", auth="oauth"), stranger.personal_organization()
    )
    agent = register_confidential(client)
    trust = trusted_issuer_create(
        actor=owner,
        organization=org,
        values={"name": "Acme Okta", "issuer": idp.issuer, "jwks_url": idp.jwks_url},
    )
    return SimpleNamespace(
        owner=owner,
        org=org,
        member=member,
        server=server,
        other_server=other_server,
        agent=agent,
        trust=trust,
        resource=metadata.resource_uri(server.slug),
    )


@pytest.fixture
def exchange(client, world, idp):
    def run(assertion=None, *, agent=None, form=None, **claims):
        agent = agent or world.agent
        if assertion is None:
            claims = {
                "audience": metadata.issuer(),
                "resource": world.resource,
                "client_id": agent["client_id"],
                "email": world.member.email,
                **claims,
            }
            assertion = idp.id_jag(**claims)
        body = {
            "grant_type": JWT_BEARER,
            "assertion": assertion,
            "client_id": agent["client_id"],
            "client_secret": agent.get("client_secret", ""),
            **(form or {}),
        }
        return client.post("/oauth/token", {k: v for k, v in body.items() if v is not None})

    return run


def error_of(response) -> str:
    return response.json()["error"]


def test_an_id_jag_of_a_trusted_provider_yields_a_token_acting_as_the_member(exchange, world):
    response = exchange(scope="mcp mcp:read offline_access")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert "refresh_token" not in body
    assert body["scope"] == "mcp mcp:read"
    token = AccessToken.objects.select_related("grant").get(
        digest=digest_token(body["access_token"])
    )
    grant = token.grant
    assert (grant.user, grant.server, grant.source) == (world.member, world.server, Grant.ID_JAG)
    assert grant.trusted_issuer == world.trust
    assert response["Cache-Control"] == "no-store"


def test_a_second_assertion_reuses_the_member_s_grant(exchange, world):
    first = exchange()
    second = exchange()
    assert first.status_code == second.status_code == 200
    assert Grant.objects.filter(user=world.member, source=Grant.ID_JAG).count() == 1


def test_an_assertion_for_another_audience_is_refused(exchange):
    response = exchange(audience="https://some-other-as.example")
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")
    assert "audience" in response.json()["error_description"]


def test_an_expired_assertion_is_refused(exchange):
    import time

    response = exchange(exp=int(time.time()) - 600, iat=int(time.time()) - 900)
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")
    assert "expired" in response.json()["error_description"]


def test_a_replayed_jti_is_refused(exchange, world, idp):
    assertion = idp.id_jag(
        audience=metadata.issuer(),
        resource=world.resource,
        client_id=world.agent["client_id"],
        email=world.member.email,
    )
    assert exchange(assertion).status_code == 200
    again = exchange(assertion)
    assert (again.status_code, error_of(again)) == (400, "invalid_grant")
    assert "jti" in again.json()["error_description"]


def test_an_assertion_of_an_unknown_issuer_is_refused(exchange):
    response = exchange(iss="https://unknown-idp.example")
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")
    assert "issuer" in response.json()["error_description"]


def test_an_assertion_signed_with_a_key_outside_the_jwks_is_refused(exchange):
    forged = RSAKey.generate_key(2048, parameters={"kid": "forged"})
    response = exchange(key=forged, header={"kid": "forged"})
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")
    assert "signature" in response.json()["error_description"]


def test_a_jwt_that_is_not_an_id_jag_is_refused(exchange):
    response = exchange(header={"typ": "JWT"})
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")


def test_a_subject_who_is_not_a_member_is_refused(exchange):
    response = exchange(email="nobody@acme.example")
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")
    assert "not a member" in response.json()["error_description"]


def test_a_viewer_gets_no_token_as_they_may_hold_no_credentials(exchange, world):
    Membership.objects.filter(user=world.member).update(role="viewer")
    response = exchange()
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")


def test_a_resource_of_another_organization_is_refused(exchange, world):
    response = exchange(resource=metadata.resource_uri(world.other_server.slug))
    assert (response.status_code, error_of(response)) == (400, "invalid_target")


def test_a_token_request_naming_another_resource_than_the_assertion_is_refused(exchange, world):
    response = exchange(form={"resource": metadata.resource_uri(world.other_server.slug)})
    assert (response.status_code, error_of(response)) == (400, "invalid_target")


def test_an_assertion_issued_to_another_client_is_refused(exchange, client, world):
    other = register_confidential(client, "Another agent")
    response = exchange(agent=other)  # its own credentials, world.agent's client_id claim
    assert response.status_code == 200  # (control: its own assertion works)
    mismatched = exchange(agent=other, client_id=world.agent["client_id"])
    assert (mismatched.status_code, error_of(mismatched)) == (400, "invalid_grant")
    assert "another client" in mismatched.json()["error_description"]


def test_a_client_outside_the_provider_s_allowed_list_is_refused(exchange, world):
    trusted_issuer_update(
        actor=world.owner, trust=world.trust, values={"allowed_client_ids": ["gmcp_client_other"]}
    )
    response = exchange()
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")


def test_a_disabled_provider_is_unknown(exchange, world):
    trusted_issuer_update(actor=world.owner, trust=world.trust, values={"enabled": False})
    response = exchange()
    assert (response.status_code, error_of(response)) == (400, "invalid_grant")


def test_disabling_the_provider_revokes_what_its_assertions_obtained(exchange, world):
    assert exchange().status_code == 200
    trusted_issuer_update(actor=world.owner, trust=world.trust, values={"enabled": False})
    assert Grant.objects.get(user=world.member, source=Grant.ID_JAG).revoked_at is not None


def test_a_wrong_client_secret_is_invalid_client(exchange, world):
    response = exchange(agent={**world.agent, "client_secret": "gmcp_cs_wrong"})
    assert (response.status_code, error_of(response)) == (401, "invalid_client")


def test_a_public_client_may_not_present_an_assertion(exchange, client, world):
    public = client.post(
        "/oauth/register",
        {"client_name": "public", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"]},
        content_type="application/json",
    ).json()
    response = exchange(agent=public, client_id=public["client_id"])
    assert (response.status_code, error_of(response)) == (401, "invalid_client")


def test_scopes_beyond_the_assertion_s_are_invalid_scope(exchange):
    response = exchange(scope="mcp:read", form={"scope": "mcp"})
    assert (response.status_code, error_of(response)) == (400, "invalid_scope")


def test_a_request_may_narrow_the_assertion_s_scopes(exchange):
    response = exchange(scope="mcp mcp:read", form={"scope": "mcp:read"})
    assert response.status_code == 200
    assert response.json()["scope"] == "mcp:read"


def test_the_jwks_is_fetched_once_and_kept(exchange, idp):
    assert exchange().status_code == 200
    assert exchange().status_code == 200
    assert idp.jwks_fetches == 1


def test_only_admins_may_trust_an_identity_provider(world, idp):
    from accounts.policy import PermissionDenied

    with pytest.raises(PermissionDenied):
        trusted_issuer_create(
            actor=world.member,
            organization=world.org,
            values={"name": "x", "issuer": "https://x.example", "jwks_url": idp.jwks_url},
        )
    assert TrustedIssuer.objects.filter(organization=world.org).count() == 1


def test_a_rotated_key_is_fetched_when_an_assertion_names_it(exchange, idp, monkeypatch):
    assert exchange().status_code == 200
    monkeypatch.setattr(assertions, "REFETCH_SECONDS", 0)  # the once-a-minute limit, elapsed
    idp.key = RSAKey.generate_key(2048, parameters={"kid": "rotated"})
    assert exchange().status_code == 200
    assert idp.jwks_fetches == 2


def test_an_unknown_kid_does_not_refetch_within_the_minute(exchange, idp):
    assert exchange().status_code == 200
    forged = RSAKey.generate_key(2048, parameters={"kid": "forged"})
    for _ in range(3):
        assert exchange(key=forged, header={"kid": "forged"}).status_code == 400
    assert idp.jwks_fetches == 1


def test_a_provider_mapped_by_sso_subject_names_the_member_its_sign_in_knows(exchange, world, idp):
    from sso.models import Connection, Identity

    connection = Connection.objects.create(
        organization=world.org, issuer=idp.issuer, client_id="getmcp"
    )
    Identity.objects.create(
        connection=connection, subject="00u-dev", user=world.member, email=world.member.email
    )
    trusted_issuer_update(
        actor=world.owner, trust=world.trust, values={"subject_mapping": "sso_subject"}
    )

    # The email claim names the owner, but this provider is mapped by subject: the member.
    response = exchange(sub="00u-dev", email=world.owner.email)
    assert response.status_code == 200, response.content
    token = AccessToken.objects.select_related("grant").get(
        digest=digest_token(response.json()["access_token"])
    )
    assert token.grant.user == world.member

    assert error_of(exchange(sub="00u-nobody")) == "invalid_grant"
    # A subject means nothing outside its issuer: the same sub from the organization's SSO at
    # another provider does not map.
    Connection.objects.filter(pk=connection.pk).update(issuer="https://other-idp.example")
    assert error_of(exchange(sub="00u-dev")) == "invalid_grant"
