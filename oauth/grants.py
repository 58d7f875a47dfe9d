"""Grants: create, revoke, and the cache invalidation that makes a revocation reach every
worker on its next request (the access tokens' digests share the API keys' generations)."""

from django.db import transaction
from django.utils import timezone

from accounts import policy
from accounts.models import Membership
from accounts.policy import Action
from audit import events as audit_events

from .models import AccessToken, Grant


def bump_tokens(digests) -> None:
    from servers.changes import bump_key

    for digest in digests:
        bump_key(digest)


def grant_create(*, user, server, client, scope: str, resource: str) -> Grant:
    grant = Grant.objects.create(
        user=user,
        organization_id=server.organization_id,
        server=server,
        client=client,
        scope=scope,
        resource=resource,
    )
    audit_events.grant_created(grant)
    return grant


def grant_for_machine(
    *,
    source: str,
    server,
    client,
    scope: str,
    resource: str,
    user=None,
    service_account=None,
    trusted_issuer=None,
) -> Grant:
    """The live grant a token-endpoint grant (ID-JAG, client credentials) issues under: the same
    principal, client, server and scope reuse one, so sessions and rate windows (bound to the
    grant) carry over between tokens, and revoking it ends them all."""
    fields = {
        "source": source,
        "server": server,
        "client": client,
        "scope": scope,
        "user": user,
        "service_account": service_account,
        "trusted_issuer": trusted_issuer,
    }
    with transaction.atomic():
        grant = Grant.objects.select_for_update().filter(revoked_at=None, **fields).first()
        if grant is not None:
            Grant.objects.filter(pk=grant.pk).update(last_used_at=timezone.now())
            return grant
        grant = Grant.objects.create(
            organization_id=server.organization_id, resource=resource, **fields
        )
    audit_events.grant_created(grant)
    return grant


def grant_revoke(*, grant: Grant, reason: str) -> bool:
    """Revoke a grant and every token issued under it. False when it was revoked already."""
    now = timezone.now()
    with transaction.atomic():
        changed = Grant.objects.filter(pk=grant.pk, revoked_at=None).update(
            revoked_at=now, revoked_reason=reason[:100]
        )
        live = AccessToken.objects.filter(grant_id=grant.pk, expires_at__gt=now)
        digests = list(live.values_list("digest", flat=True))
        AccessToken.objects.filter(grant_id=grant.pk, revoked_at=None).update(revoked_at=now)
        grant.refresh_tokens.all().delete()
        transaction.on_commit(lambda: bump_tokens(digests))
        if changed:
            audit_events.grant_revoked(grant, reason)
    grant.revoked_at = grant.revoked_at or now
    return bool(changed)


def grants_revoke_for_member(*, user_id: int, organization_id: int, reason: str) -> int:
    count = 0
    for grant in Grant.objects.filter(
        user_id=user_id, organization_id=organization_id, revoked_at=None
    ):
        count += grant_revoke(grant=grant, reason=reason)
    return count


def grants_for_user(*, user):
    return (
        Grant.objects.filter(user=user, revoked_at=None)
        .select_related("client", "server", "organization")
        .order_by("-created_at")
    )


def grants_for_organization(*, organization):
    return (
        Grant.objects.filter(organization=organization, revoked_at=None)
        .select_related("client", "server", "user", "service_account")
        .order_by("-created_at")
    )


def is_member(*, user, organization_id: int) -> bool:
    """May `user` let an app act as them on this organization's servers? A grant is a credential,
    so it takes the role that may create API keys (accounts/policy.py)."""
    membership = Membership.objects.filter(user=user, organization_id=organization_id).first()
    return membership is not None and policy.can(
        user=user, org=membership.organization, action=Action.KEY_CREATE, membership=membership
    )
