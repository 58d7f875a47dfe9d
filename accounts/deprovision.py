"""Deprovisioning: when a person is removed from an organization (or deactivated there by its
identity provider, scim/), everything of theirs in that organization ends.

    member_deprovision(organization=org, user=person, reason="scim.deactivate") -> Deprovisioned

Every surface that takes someone out of an organization goes through it: the dashboard's and
the API's member removal (accounts.services.membership_remove) and SCIM deactivation and
deletion (scim/users.py). What ends, and how fast:

- **Membership**: deleted (if it still exists). A dashboard session of the person can no longer
  reach the organization: every dashboard, API and inspector request checks membership through
  accounts/policy.py and dashboard/scoping.py on every request (nothing of it is cached in the
  session), so the next request answers 404 and the session's current organization falls back
  to their personal one. The person is *not* signed out of getmcp: an organization does not own
  the account (the same person may work in other organizations, and one organization's
  directory must not interrupt another's work), so their Django sessions stay valid for
  everything else. Deactivating the account itself (User.is_active) is an operator's act, not an
  organization's.
- **Personal API keys** in the organization: suspended (gateway/pipeline/credentials.py
  `key_holder`; servers/access_changes.py bumps their generations, so every web process drops
  its cached copy on the announcement, at most MCP_STATE_MAX_STALE_SECONDS later without it).
  With `revoke_keys=True` (SCIM DELETE) they are revoked for good instead.
- **OAuth grants** given in the organization and their access and refresh tokens: revoked
  (oauth/signals.py on the membership's deletion; tokens' generations bumped the same way).
- **Open MCP sessions** of those keys and grants on the organization's servers, on every web
  process: ended, and their open SSE streams (session GET streams, the old SSE transport) closed
  at once through the session's wake-up channel (servers/session_ends.py).
- **Inspector sockets** of the person: told on their pub/sub channel (`keys.person_changed`) to
  check the person again now; one on this organization's servers closes (4403) within a round
  trip (inspector/consumers.py).
- **Anything else of theirs**, such as connected accounts (connections/): the signal
  `member_deprovisioned` is sent once the change is committed:

      from accounts.deprovision import member_deprovisioned

      @receiver(member_deprovisioned)
      def _revoke_connections(sender, *, organization, user, reason, **kwargs): ...

  `sender` is `Membership`; `organization` an accounts.Organization, `user` an accounts.User,
  `reason` a short string ("member.remove", "member.leave", "scim.deactivate", "scim.delete").
  Receivers run after commit, in the request or task that deprovisioned; one that raises is
  logged and does not stop the others (`send_robust`).

An audit row `member.deprovision` records what ended (counts).
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.dispatch import Signal

from audit.record import audit_record
from infra import keys as rkeys
from infra.redis import publish, sync_client
from oauth.models import Grant
from servers.models import Server
from servers.outages import best_effort
from servers.session_ends import end_sessions_of

from . import billing
from .models import ApiKey, Membership, Organization, User

log = logging.getLogger(__name__)

# Sent after commit: member_deprovisioned.send_robust(Membership, organization=, user=, reason=)
member_deprovisioned = Signal()


@dataclass(frozen=True)
class Deprovisioned:
    membership_removed: bool
    keys: int  # personal keys suspended (or revoked)
    grants: int  # OAuth grants revoked


def member_deprovision(
    *, organization: Organization, user: User, reason: str, revoke_keys: bool = False
) -> Deprovisioned:
    """End everything of `user` in `organization` (see the module docstring). No policy check:
    callers decide who may do it (accounts.services.membership_remove, scim.users). Refuses
    (ValueError) to remove the organization's last owner."""
    with transaction.atomic():
        membership = (
            Membership.objects.select_for_update()
            .filter(organization=organization, user=user)
            .first()
        )
        if membership is not None and membership.role == Membership.OWNER:
            others = organization.memberships.filter(role=Membership.OWNER).exclude(
                pk=membership.pk
            )
            if not others.exists():
                raise ValueError("An organization needs at least one owner.")
            billing.pass_on(organization, leaving=user)
        keys = ApiKey.objects.filter(
            organization=organization, created_by=user, service_account=None, revoked_at=None
        )
        key_idents = {f"key:{pk}" for pk in keys.values_list("pk", flat=True)}
        grants = Grant.objects.filter(organization=organization, user=user)
        # Revoked grants too: a session opened before an earlier revocation still holds its id.
        grant_idents = {f"grant:{pk}" for pk in grants.values_list("pk", flat=True)}
        live_grants = grants.filter(revoked_at=None).count()
        if revoke_keys:
            for key in keys:
                key.revoke()
        if membership is not None:
            # servers/access_changes.py suspends the keys, oauth/signals.py revokes the grants.
            membership.delete()
        server_ids = list(
            Server.objects.filter(organization=organization).values_list("pk", flat=True)
        )
        result = Deprovisioned(membership is not None, len(key_idents), live_grants)
        audit_record(
            action="member.deprovision",
            organization_id=organization.pk,
            target_type="user",
            target_id=str(user.pk),
            target_label=user.email,
            before={"role": membership.role if membership else None},
            after={
                "reason": reason,
                "keys": "revoked" if revoke_keys else "suspended",
                "keys_count": result.keys,
                "grants_revoked": result.grants,
            },
        )

        def after_commit() -> None:
            end_sessions_of(server_ids=server_ids, credentials=key_idents | grant_idents)
            best_effort(publish, sync_client(), rkeys.person_changed(user.pk), reason)
            for receiver, outcome in member_deprovisioned.send_robust(
                Membership, organization=organization, user=user, reason=reason
            ):
                if isinstance(outcome, Exception):
                    log.error("member_deprovisioned receiver %r failed", receiver, exc_info=outcome)

        transaction.on_commit(after_commit)
    return result
