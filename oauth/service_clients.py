"""Client credentials for service accounts (RFC 6749 §4.4): admins give a service account an
OAuth client (id and secret shown once, digest stored; or public keys for `private_key_jwt`
client assertions, RFC 7523 §2.2), and the token endpoint's `client_credentials` grant issues
tokens that act as the account, with its role, for one server of its organization.

Every admin function checks the policy itself (accounts/policy.py, SERVICE_ACCOUNTS).
"""

import secrets

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts import policy
from accounts.models import ServiceAccount, User
from accounts.policy import Action
from audit import events as audit_events

from . import assertions, metadata
from .authorization import server_for_resource
from .clients import CLIENT_ID_PREFIX, SECRET_PREFIX
from .errors import OAuthError
from .grants import grant_for_machine, grant_revoke
from .id_jag import MACHINE_SCOPES
from .models import SCOPE_MCP, Client, Grant, digest_token
from .tokens import tokens_issue

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SECRET, PRIVATE_KEY_JWT = "client_secret_basic", "private_key_jwt"


def service_client_create(
    *, actor: User, account: ServiceAccount, name: str, jwks: dict | None = None
) -> tuple[Client, str | None]:
    """(client, raw secret): a secret client, or with `jwks` a private_key_jwt one (no secret)."""
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    if account.disabled_at is not None:
        raise ValidationError("Enable the service account before giving it client credentials.")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationError("Give the client credentials a name of 1 to 200 characters.")
    if jwks:
        try:
            assertions.key_set_of(jwks)
        except OAuthError as exc:
            raise ValidationError(exc.description) from None
    raw = None if jwks else SECRET_PREFIX + secrets.token_urlsafe(32)
    client = Client.objects.create(
        client_id=CLIENT_ID_PREFIX + secrets.token_urlsafe(18),
        kind=Client.SERVICE_ACCOUNT,
        client_name=name,
        grant_types=["client_credentials"],
        token_endpoint_auth_method=PRIVATE_KEY_JWT if jwks else SECRET,
        secret_digest=digest_token(raw) if raw else "",
        service_account=account,
        jwks=jwks or {},
        created_by=actor,
    )
    audit_events.service_account_changed(
        account,
        "client_create",
        after={
            "clientId": client.client_id,
            "name": name,
            "auth": client.token_endpoint_auth_method,
        },
    )
    return client, raw


def service_client_delete(*, actor: User, client: Client) -> None:
    """Delete the credentials; every token issued with them stops on its next request."""
    account = client.service_account
    if account is None:
        raise ValidationError("These are not a service account's client credentials.")
    policy.require(user=actor, org=account.organization, action=Action.SERVICE_ACCOUNTS)
    with transaction.atomic():
        for grant in Grant.objects.filter(client=client, revoked_at=None):
            grant_revoke(grant=grant, reason="client credentials deleted")
        audit_events.service_account_changed(
            account,
            "client_delete",
            before={"clientId": client.client_id, "name": client.client_name},
        )
        client.delete()


def service_clients_of(account: ServiceAccount):
    return Client.objects.filter(service_account=account).order_by("created_at")


def client_from_assertion(*, client_id: str | None, assertion_type, assertion) -> Client:
    """private_key_jwt (RFC 7523 §3): iss = sub = the client_id, aud = this issuer (or the token
    endpoint), signed by a key the client registered, unexpired, its jti used once."""
    if assertion_type != CLIENT_ASSERTION_TYPE:
        raise OAuthError("invalid_client", "Unsupported client_assertion_type", 401)
    _, unverified = assertions.unverified(assertion, error="invalid_client")
    named = unverified.get("sub")
    if client_id is not None and client_id != named:
        raise OAuthError("invalid_client", "client_id does not match the client assertion", 401)
    client = Client.objects.filter(
        client_id=named if isinstance(named, str) else "",
        kind=Client.SERVICE_ACCOUNT,
        token_endpoint_auth_method=PRIVATE_KEY_JWT,
    ).first()
    if client is None:
        raise OAuthError("invalid_client", "Unknown client", 401)
    try:
        claims = assertions.verify(assertion, assertions.key_set_of(client.jwks), "invalid_client")
        if claims.get("iss") != client.client_id or claims.get("sub") != client.client_id:
            raise OAuthError(
                "invalid_client", "The client assertion's iss and sub must be the client_id"
            )
        audiences = (metadata.issuer(), metadata.endpoint("token"))
        if not any(assertions.audience_matches(claims, aud) for aud in audiences):
            raise OAuthError("invalid_client", "The client assertion's audience is not this issuer")
        assertions.check_times(claims, "invalid_client")
        assertions.use_jti_once(client.client_id, claims, "invalid_client")
    except OAuthError as exc:
        raise OAuthError("invalid_client", exc.description, 401) from None
    return client


def token_from_client_credentials(*, client: Client, resource, scope) -> dict:
    account = client.service_account
    if client.kind != Client.SERVICE_ACCOUNT or account is None:
        raise OAuthError(
            "unauthorized_client", "Only a service account's credentials use this grant"
        )
    if account.disabled_at is not None:
        raise OAuthError("invalid_grant", "The service account is disabled")
    if not resource:
        raise OAuthError("invalid_target", "resource is required: the MCP server's URL (RFC 8707)")
    server = server_for_resource(resource)
    if server is None or server.organization_id != account.organization_id:
        raise OAuthError(
            "invalid_target", "resource is not an MCP server of the service account's organization"
        )
    asked = (scope or SCOPE_MCP).split()
    scopes = [s for s in MACHINE_SCOPES if s in asked]
    if not scopes:
        raise OAuthError("invalid_scope", f"Ask for {' or '.join(MACHINE_SCOPES)}")
    grant = grant_for_machine(
        source=Grant.CLIENT_CREDENTIALS,
        server=server,
        client=client,
        scope=" ".join(scopes),
        resource=metadata.resource_uri(server.slug),
        service_account=account,
    )
    return tokens_issue(grant=grant, client=client, refresh_allowed=False)
