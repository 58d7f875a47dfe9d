"""Enterprise-managed authorization: the token endpoint's jwt-bearer grant with an Identity
Assertion JWT Authorization Grant (ID-JAG; SEP-990, draft-ietf-oauth-identity-assertion-authz-grant,
RFC 7523).

An organization trusts an enterprise identity provider (TrustedIssuer: issuer, JWKS URL,
audience, allowed clients). A confidential client presents an ID-JAG that provider signed; it
names the member (`sub`/`email`), the client (`client_id`), the MCP server (`resource`) and the
scopes. The token acts as that member with their role, no consent page: the provider decided.

Checked in this order, each refusal an RFC 6749 §5.2 error: typ, issuer trusted by the
organization owning the resource (unknown issuer: invalid_grant; resource of an organization
that does not trust it: invalid_target), signature against the provider's JWKS, aud, exp / nbf /
iat, client binding and the provider's allowed clients, subject to a current member, scopes,
and last the jti (remembered until exp, so a refused assertion never burns its jti).
"""

from django.db.models import Q

from accounts.models import User

from . import assertions, metadata
from .authorization import server_for_resource
from .errors import OAuthError
from .grants import grant_for_machine, is_member
from .models import SCOPE_MCP, SCOPE_READ, Client, Grant, TrustedIssuer
from .tokens import tokens_issue

ID_JAG_TYP = "oauth-id-jag+jwt"
# Scopes a token-endpoint grant can carry: no offline_access (no refresh tokens here).
MACHINE_SCOPES = (SCOPE_MCP, SCOPE_READ)


def token_from_id_jag(*, client: Client, assertion, resource, scope) -> dict:
    if client.is_public:
        # The draft: confidential clients only; public ones use the authorization code flow.
        raise OAuthError("invalid_client", "An identity assertion needs client authentication", 401)
    header, unverified = assertions.unverified(assertion)
    if not _is_id_jag_typ(header.get("typ")):
        raise OAuthError("invalid_grant", f"The assertion's typ must be {ID_JAG_TYP}")
    issuer = unverified.get("iss")
    trusted = TrustedIssuer.objects.filter(
        issuer=issuer if isinstance(issuer, str) else "", enabled=True
    )
    if not trusted.exists():
        raise OAuthError(
            "invalid_grant", "The assertion's issuer is not a trusted identity provider"
        )
    named = unverified.get("resource")
    if (
        resource is not None
        and named is not None
        and resource.rstrip("/") != str(named).rstrip("/")
    ):
        raise OAuthError("invalid_target", "resource does not match the assertion's resource")
    server = server_for_resource(named if named is not None else resource)
    if server is None:
        raise OAuthError("invalid_target", "The assertion's resource is not an MCP server here")
    trust = trusted.filter(organization_id=server.organization_id).first()
    if trust is None:
        raise OAuthError(
            "invalid_target",
            "The resource belongs to an organization that does not trust this issuer",
        )
    key_set = assertions.jwks_cache.get(trust.jwks_url, kid=header.get("kid"))
    claims = assertions.verify(assertion, key_set)
    _check_claims(claims, trust, client)
    user = _member(trust, claims, server.organization_id)
    scopes = _scopes(claims.get("scope"), scope)
    assertions.use_jti_once(trust.issuer, claims)
    grant = grant_for_machine(
        source=Grant.ID_JAG,
        server=server,
        client=client,
        scope=" ".join(scopes),
        resource=metadata.resource_uri(server.slug),
        user=user,
        trusted_issuer=trust,
    )
    return tokens_issue(grant=grant, client=client, refresh_allowed=False)


def _check_claims(claims: dict, trust: TrustedIssuer, client: Client) -> None:
    """The verified assertion's issuer, audience, times and client, or OAuthError."""
    if claims.get("iss") != trust.issuer:
        raise OAuthError("invalid_grant", "The assertion's issuer changed under its signature")
    if not assertions.audience_matches(claims, trust.audience or metadata.issuer()):
        raise OAuthError(
            "invalid_grant", "The assertion's audience is not this authorization server"
        )
    assertions.check_times(claims)
    if claims.get("client_id") != client.client_id:
        raise OAuthError("invalid_grant", "The assertion was issued to another client")
    if trust.allowed_client_ids and client.client_id not in trust.allowed_client_ids:
        raise OAuthError(
            "invalid_grant", "This client may not use the identity provider's assertions"
        )


def _is_id_jag_typ(typ) -> bool:
    # RFC 8725 §3.11 / RFC 7515 §4.1.9: compared case-insensitively, "application/" optional.
    return isinstance(typ, str) and typ.lower().removeprefix("application/") == ID_JAG_TYP


def _member(trust: TrustedIssuer, claims: dict, organization_id: int) -> User:
    """The person the assertion names, while they are a member who may hold credentials."""
    if trust.subject_mapping == TrustedIssuer.BY_SSO_SUBJECT:
        return _member_by_sso_subject(trust, claims, organization_id)
    email = claims.get("email")
    if not isinstance(email, str):
        # Some providers put the address in `sub` alone.
        subject = claims.get("sub")
        email = subject if isinstance(subject, str) and "@" in subject else None
    if not email:
        raise OAuthError("invalid_grant", "The assertion names no email to map to a member")
    user = User.objects.filter(Q(email__iexact=email), is_active=True).first()
    if user is None or not is_member(user=user, organization_id=organization_id):
        raise OAuthError("invalid_grant", "The assertion's subject is not a member here")
    return user


def _member_by_sso_subject(trust: TrustedIssuer, claims: dict, organization_id: int) -> User:
    """The person whose sign-in through this organization's SSO (sso.Identity) carried this
    `sub` from this very issuer: a subject means nothing outside its issuer, so a provider
    trusted here cannot name someone another provider knows under the same string."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise OAuthError("invalid_grant", "The assertion names no subject to map to a member")
    user = User.objects.filter(
        is_active=True,
        sso_identities__subject=subject,
        sso_identities__connection__organization_id=organization_id,
        sso_identities__connection__issuer=trust.issuer,
    ).first()
    if user is None or not is_member(user=user, organization_id=organization_id):
        raise OAuthError("invalid_grant", "The assertion's subject is not a member here")
    return user


def _scopes(granted, requested) -> list[str]:
    """RFC 6749 §3.3: the assertion's scopes (what the provider authorized), narrowed to the
    request's when it names some, within what a token here can carry."""
    allowed = granted.split() if isinstance(granted, str) else [SCOPE_MCP]
    if requested:
        asked = requested.split()
        if not set(asked) <= set(allowed):
            raise OAuthError("invalid_scope", "The request asks for more than the assertion grants")
        allowed = asked
    chosen = [s for s in MACHINE_SCOPES if s in allowed]
    if not chosen:
        raise OAuthError(
            "invalid_scope", f"The assertion grants none of {', '.join(MACHINE_SCOPES)}"
        )
    return chosen
