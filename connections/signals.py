"""A person deprovisioned from an organization (removed by an admin, leaving, deactivated or
deleted by the identity provider over SCIM: accounts/deprovision.py) loses their connected
accounts there, once the change is committed; and every write of a connection or provider drops
the cached tokens of its organization on every process."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from accounts.deprovision import member_deprovisioned

from . import token_cache
from .models import Connection, Provider
from .revoking import revoke_all


@receiver(member_deprovisioned, dispatch_uid="connections.revoke_on_deprovision")
def revoke_on_deprovision(sender, *, organization, user, reason: str, **kwargs) -> None:
    revoke_all(organization_id=organization.pk, user_id=user.pk, reason=reason)


@receiver(post_save, sender=Connection, dispatch_uid="connections.tokens_changed_on_save")
@receiver(post_delete, sender=Connection, dispatch_uid="connections.tokens_changed_on_delete")
@receiver(post_save, sender=Provider, dispatch_uid="connections.provider_changed_on_save")
@receiver(post_delete, sender=Provider, dispatch_uid="connections.provider_changed_on_delete")
def tokens_changed(sender, instance, using: str = "default", **kwargs) -> None:
    """Any write of a connection (stored, revoked) or provider (scopes, endpoints, deleted):
    every process drops the organization's cached tokens (token_cache.py)."""
    token_cache.changed(instance.organization_id, using)
