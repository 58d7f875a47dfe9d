"""A person removed from an organization (by an admin, by leaving, by deprovisioning: any path
that deletes the membership) loses their connected accounts there at once."""

from django.db.models.signals import post_delete
from django.dispatch import receiver

from accounts.models import Membership

from .revoking import revoke_all


@receiver(post_delete, sender=Membership, dispatch_uid="connections.revoke_on_removal")
def revoke_on_removal(sender, instance: Membership, **kwargs) -> None:
    revoke_all(organization_id=instance.organization_id, user_id=instance.user_id, reason="removed")
