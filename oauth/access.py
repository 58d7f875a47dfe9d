"""Loading an access token for the hot path's credential cache (gateway/endpoint/auth.py).

Runs once per token per process (then the token's Redis generation guards the cached copy), so
the membership is checked here too: a grant acts as its user inside the organization.
"""

from accounts.models import Membership
from servers.access import key_access
from servers.quotas import limits_of

from .models import AccessToken


def load_access_token(digest: str, generation: str, credential_class):
    token = (
        AccessToken.objects.select_related("grant", "grant__client", "grant__user")
        .filter(digest=digest)
        .first()
    )
    if token is None:
        return None
    grant = token.grant
    role = (
        Membership.objects.filter(user_id=grant.user_id, organization_id=grant.organization_id)
        .values_list("role", flat=True)
        .first()
    )
    member = role is not None
    return credential_class(
        key_id=None,
        organization_id=grant.organization_id,
        name=str(grant.client),
        server_ids=frozenset({grant.server_id}),
        expires_at=token.expires_at.timestamp(),
        revoked=bool(
            token.revoked_at or grant.revoked_at or not member or not grant.user.is_active
        ),
        generation=generation,
        grant_id=grant.pk,
        user_id=grant.user_id,
        client_name=str(grant.client)[:200],
        audience_server_id=grant.server_id,
        scopes=frozenset(grant.scopes),
        access=key_access({str(grant.server_id): grant.access} if grant.access else {}),
        role=role or "",
        limits=limits_of(grant.limits),
    )
