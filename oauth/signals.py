"""A grant acts as its user inside the organization: when the membership or the user goes,
so does every grant (and each token's cached copy on every worker)."""

from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete
from django.dispatch import receiver

from accounts.models import Membership, User

from .grants import bump_tokens, grant_revoke, grants_revoke_for_member
from .models import AccessToken, Grant


@receiver(post_delete, sender=Membership)
def _membership_gone(sender, instance, **kwargs) -> None:
    grants_revoke_for_member(
        user_id=instance.user_id,
        organization_id=instance.organization_id,
        reason="membership removed",
    )


@receiver(post_save, sender=User)
def _user_deactivated(sender, instance, **kwargs) -> None:
    if not instance.is_active:
        for grant in Grant.objects.filter(user=instance, revoked_at=None):
            grant_revoke(grant=grant, reason="user deactivated")


@receiver(pre_delete, sender=AccessToken)
def _token_deleted(sender, instance, **kwargs) -> None:
    digest = instance.digest
    transaction.on_commit(lambda: bump_tokens([digest]))
