"""A person deprovisioned from an organization (removed by an admin, leaving, deactivated or
deleted by the identity provider over SCIM: accounts/deprovision.py) loses their connected
accounts there, once the change is committed."""

from django.dispatch import receiver

from accounts.deprovision import member_deprovisioned

from .revoking import revoke_all


@receiver(member_deprovisioned, dispatch_uid="connections.revoke_on_deprovision")
def revoke_on_deprovision(sender, *, organization, user, reason: str, **kwargs) -> None:
    revoke_all(organization_id=organization.pk, user_id=user.pk, reason=reason)
