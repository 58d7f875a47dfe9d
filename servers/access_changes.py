"""Governance changes reach open sessions at once.

A key's or grant's access (or limits), a server's role limits, a member's role and an
organization's quota are all compiled into something cached per process: the credential
(gateway/pipeline/credentials.py) or the snapshot. Changing one bumps the generation that guards that
cache (and writes the durable `Change` row, servers/invalidation.py), so the next request of any
worker sees the new limits; when what a principal may *see* changed, the sessions of the
servers concerned are told `list_changed` (servers.changes.notify_sessions), so clients list
again instead of calling what is gone.
"""

from django.db import transaction
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save
from django.dispatch import receiver

from accounts.models import ApiKey, Membership, Organization, ServiceAccount, User
from oauth.models import AccessToken, Grant

from . import changes, invalidation
from .access import ALL_LISTS
from .models import Change, Server
from .outages import best_effort

_REMEMBERED = {
    ApiKey: ("access", "limits"),
    Grant: ("access", "limits"),
    Server: ("role_access",),
    Membership: ("role",),
    ServiceAccount: ("role", "disabled_at"),
    Organization: ("monthly_call_quota", "task_concurrency"),
}


def _bump_servers(slugs: list[str]) -> None:
    for slug in slugs:
        changes.bump_server(slug)


def _remember(sender, instance, **kwargs) -> None:
    fields = _REMEMBERED[sender]
    old = sender.objects.filter(pk=instance.pk).values(*fields).first() if instance.pk else None
    instance._governance_before = old


for _model in _REMEMBERED:
    pre_save.connect(_remember, sender=_model, dispatch_uid=f"governance-{_model.__name__}")


def _changed(instance, field: str) -> bool:
    before = getattr(instance, "_governance_before", None)
    return before is not None and before[field] != getattr(instance, field)


def _notify(server_ids) -> None:
    for server_id in set(server_ids):
        best_effort(changes.notify_sessions, server_id, ALL_LISTS)


def _grant_digests(grants) -> list[str]:
    return list(
        AccessToken.objects.filter(grant__in=grants, revoked_at=None).values_list(
            "digest", flat=True
        )
    )


def _bump_digests(digests, using: str) -> None:
    for digest in digests:
        invalidation.record(Change.KEY, digest, using)

    def bump() -> None:
        for digest in digests:
            changes.bump_key(digest)

    transaction.on_commit(bump)


@receiver(post_save, sender=ApiKey)
def _key_access_changed(sender, instance, created, using: str = "default", **kwargs) -> None:
    # The key's generation is bumped by servers.changes on every save; here: who to tell.
    if created or not _changed(instance, "access"):
        return
    before = instance._governance_before["access"] or {}
    servers = {int(s) for s in (*before, *(instance.access or {})) if str(s).isdigit()}
    transaction.on_commit(lambda: _notify(servers))


@receiver(post_save, sender=Grant)
def _grant_access_changed(sender, instance, created, using: str = "default", **kwargs) -> None:
    if created or not (_changed(instance, "access") or _changed(instance, "limits")):
        return
    _bump_digests(_grant_digests([instance]), using)
    if _changed(instance, "access"):
        server_id = instance.server_id
        transaction.on_commit(lambda: _notify([server_id]))


@receiver(post_save, sender=Server)
def _role_access_changed(sender, instance, created, **kwargs) -> None:
    # The snapshot is recompiled (servers.changes bumps the server); its sessions must list again.
    if not created and _changed(instance, "role_access"):
        server_id = instance.pk
        transaction.on_commit(lambda: _notify([server_id]))


def _reload_credentials_of(*, org_id: int, user_id: int, using: str) -> None:
    """Every key and grant acting as this person in this organization is judged again (role,
    suspension) on its next request, on every process."""
    keys = ApiKey.objects.filter(organization_id=org_id, created_by_id=user_id)
    grants = Grant.objects.filter(organization_id=org_id, user_id=user_id, revoked_at=None)
    _bump_digests([*keys.values_list("digest", flat=True), *_grant_digests(grants)], using)


@receiver(post_save, sender=Membership)
def _role_changed(sender, instance, created, using: str = "default", **kwargs) -> None:
    org_id = instance.organization_id
    if created:
        # Someone who comes back: keys suspended while they were away are judged again.
        _reload_credentials_of(org_id=org_id, user_id=instance.user_id, using=using)
        return
    if not _changed(instance, "role"):
        return
    _reload_credentials_of(org_id=org_id, user_id=instance.user_id, using=using)
    limited = Server.objects.filter(organization_id=org_id).exclude(role_access={})
    server_ids = list(limited.values_list("pk", flat=True))
    transaction.on_commit(lambda: _notify(server_ids))


@receiver(post_save, sender=ServiceAccount)
def _service_account_changed(sender, instance, created, using: str = "default", **kwargs) -> None:
    # Its keys act as it: a new role or a disabled account is judged on their next request.
    if created or not (_changed(instance, "role") or _changed(instance, "disabled_at")):
        return
    keys = ApiKey.objects.filter(service_account_id=instance.pk)
    grants = Grant.objects.filter(service_account_id=instance.pk, revoked_at=None)
    _bump_digests([*keys.values_list("digest", flat=True), *_grant_digests(grants)], using)
    if _changed(instance, "role"):
        limited = Server.objects.filter(organization_id=instance.organization_id)
        server_ids = list(limited.exclude(role_access={}).values_list("pk", flat=True))
        transaction.on_commit(lambda: _notify(server_ids))


@receiver(post_delete, sender=Membership)
def _member_removed(sender, instance, using: str = "default", **kwargs) -> None:
    # Their keys are suspended from now on (gateway/pipeline/credentials.py: key_holder).
    _reload_credentials_of(org_id=instance.organization_id, user_id=instance.user_id, using=using)


@receiver(post_save, sender=User)
def _user_deactivated(sender, instance, using: str = "default", **kwargs) -> None:
    if instance.is_active:
        return
    keys = ApiKey.objects.filter(created_by_id=instance.pk)
    _bump_digests(list(keys.values_list("digest", flat=True)), using)


@receiver(post_save, sender=Organization)
def _quota_changed(sender, instance, created, using: str = "default", **kwargs) -> None:
    # The monthly quota is compiled into every snapshot of the organization's servers.
    if created or not _changed(instance, "monthly_call_quota"):
        return
    slugs = list(Server.objects.filter(organization=instance).values_list("slug", flat=True))
    for slug in slugs:
        invalidation.record(Change.SERVER, slug, using)
    transaction.on_commit(lambda: _bump_servers(slugs))


@receiver(pre_delete, sender=User)
def _user_deleted(sender, instance, **kwargs) -> None:
    # Deleting the account sets created_by to NULL, which would read as a key of no known
    # creator (judged as a member): a deleted person's keys are revoked instead.
    for key in ApiKey.objects.filter(created_by_id=instance.pk, revoked_at=None):
        key.revoke()
