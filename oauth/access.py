"""Loading an access token for the hot path's credential cache (gateway/pipeline/credentials.py).

Runs once per token per process (then the token's Redis generation guards the cached copy), so
the membership is checked here too: a grant acts as its user inside the organization.
"""

from accounts.models import Membership
from servers.access import key_access
from servers.quotas import limits_of

from .models import AccessToken


def load_access_token(digest: str, generation: str, credential_class):
    token = (
        AccessToken.objects.select_related(
            "grant", "grant__client", "grant__user", "grant__service_account"
        )
        .filter(digest=digest)
        .first()
    )
    if token is None:
        return None
    grant = token.grant
    account = grant.service_account
    if account is not None:
        # Client credentials act as the service account, with its role; refused (401
        # invalid_token, derived here, so enabling it again lifts it) while it is disabled.
        # servers/access_changes.py bumps these tokens when it changes, as it does its keys.
        role, standing = account.role, account.disabled_at is None
    else:
        user = grant.user
        assert user is not None  # the check constraint: a person's grant, else an account's
        member_role = (
            Membership.objects.filter(user_id=user.pk, organization_id=grant.organization_id)
            .values_list("role", flat=True)
            .first()
        )
        role, standing = member_role or "", member_role is not None and user.is_active
    return credential_class(
        key_id=None,
        organization_id=grant.organization_id,
        # A service account's token is named by its account in the call log, as its keys are.
        name=account.name if account is not None else str(grant.client),
        server_ids=frozenset({grant.server_id}),
        expires_at=token.expires_at.timestamp(),
        revoked=bool(token.revoked_at or grant.revoked_at or not standing),
        generation=generation,
        grant_id=grant.pk,
        user_id=grant.user_id,
        service_account_id=grant.service_account_id,
        client_name=str(grant.client)[:200],
        audience_server_id=grant.server_id,
        scopes=frozenset(grant.scopes),
        access=key_access({str(grant.server_id): grant.access} if grant.access else {}),
        role=role or "",
        limits=limits_of(grant.limits),
    )
