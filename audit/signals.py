"""Model changes and Django's login signals as audit rows.

Servers, their parts, API keys, personal access tokens, secrets and organizations are written by
many surfaces (dashboard forms, the management API, imports, commands, the upstream refresh).
Recording on the model catches every one of them with one rule instead of a call per view; the
before state is read in pre_save. Membership, invitations, publishing and OAuth grants and
tokens have services (or bulk updates that send no signals), which call `audit_record`
themselves.
"""

from django.apps import apps
from django.contrib.auth import signals as auth_signals
from django.db.models import signals
from django.dispatch import receiver

from .context import Actor, current_request, request_address
from .record import audit_record

# Never in a diff: credentials (hashes and ciphertexts), and bookkeeping that changes on use.
SKIPPED = {
    "digest",
    "ciphertext",
    "test_ciphertext",
    "nonce_digest",
    "secret_digest",
    "last_used_at",
    "created_at",
    "updated_at",
    "id",
}


def _fields(instance) -> dict:
    values = {}
    for field in instance._meta.concrete_fields:
        if field.name in SKIPPED:
            continue
        values[field.attname] = field.value_from_object(instance)
    return values


def _server_org(instance):
    from servers.models import Server

    return (
        Server.objects.filter(pk=instance.server_id)
        .values_list("organization_id", flat=True)
        .first()
    )


def _user_org(instance):
    return getattr(instance.user, "personal_org_id", None)


def _tracked():
    from accounts.models import ApiKey, Organization
    from servers.models import Prompt, Resource, ResourceTemplate, Server, Tool
    from vault.models import NetworkAllowance, Secret

    # The API's token model by name: the audit trail is domain, below the API.
    PersonalAccessToken = apps.get_model("api", "PersonalAccessToken")  # noqa: N806
    part_label = lambda i: getattr(i, "name", "") or getattr(i, "uri", "")  # noqa: E731
    return {
        Server: ("server", lambda i: i.organization_id, lambda i: i.slug),
        Tool: ("tool", _server_org, lambda i: i.name),
        Resource: ("resource", _server_org, lambda i: i.uri),
        ResourceTemplate: ("resource_template", _server_org, lambda i: i.uri_template),
        Prompt: ("prompt", _server_org, part_label),
        ApiKey: ("api_key", lambda i: i.organization_id, lambda i: f"{i.name} ({i.prefix}…)"),
        PersonalAccessToken: ("token", _user_org, lambda i: f"{i.name} ({i.prefix}…)"),
        Secret: ("secret", lambda i: i.organization_id, lambda i: i.name),
        NetworkAllowance: ("network_allowance", lambda i: i.organization_id, lambda i: i.cidr),
        Organization: ("organization", lambda i: i.pk, lambda i: i.slug),
    }


_TRACKED: dict | None = None


def tracked() -> dict:
    global _TRACKED
    if _TRACKED is None:
        _TRACKED = _tracked()
    return _TRACKED


def _action(kind: str, before: dict | None, after: dict | None, instance) -> str:
    if before is None:
        return f"{kind}.create"
    if after is None:
        return f"{kind}.delete"
    if "revoked_at" in after and before.get("revoked_at") is None and after["revoked_at"]:
        return f"{kind}.revoke"
    if kind == "secret" and getattr(instance, "_audit_rotated", False):
        return "secret.rotate"
    return f"{kind}.update"


@receiver(signals.pre_save)
def _before_save(sender, instance, raw: bool = False, **kwargs) -> None:
    if raw or sender not in tracked() or instance.pk is None:
        return
    old = sender.objects.filter(pk=instance.pk).first()
    instance._audit_before = _fields(old) if old is not None else None
    if old is not None and hasattr(old, "ciphertext"):
        # Compared, never stored: a new ciphertext means a new value (a rotation).
        instance._audit_rotated = (old.ciphertext, old.test_ciphertext) != (
            instance.ciphertext,
            instance.test_ciphertext,
        )


@receiver(signals.post_save)
def _after_save(sender, instance, created, raw: bool = False, update_fields=None, **kwargs) -> None:
    if raw or sender not in tracked():
        return
    kind, org_of, label_of = tracked()[sender]
    before = None if created else getattr(instance, "_audit_before", None)
    after = _fields(instance)
    if before is not None:
        changed = {k for k in after if before.get(k) != after.get(k)}
        if not changed and not getattr(instance, "_audit_rotated", False):
            return
    instance._audit_before = after
    audit_record(
        action=_action(kind, before, after, instance),
        organization_id=org_of(instance),
        target_type=kind,
        target_id=instance.pk,
        target_label=label_of(instance),
        before=before,
        after=after,
    )


@receiver(signals.pre_delete)
def _before_delete(sender, instance, **kwargs) -> None:
    if sender in tracked():
        # Parts are deleted with their server: find the organization while the server exists.
        instance._audit_org = tracked()[sender][1](instance)


@receiver(signals.post_delete)
def _after_delete(sender, instance, **kwargs) -> None:
    if sender not in tracked():
        return
    kind, _org_of, label_of = tracked()[sender]
    audit_record(
        action=f"{kind}.delete",
        organization_id=getattr(instance, "_audit_org", None),
        target_type=kind,
        target_id=instance.pk,
        target_label=label_of(instance),
        before=_fields(instance),
    )


def _key_rescoped(sender, instance, action, pk_set, reverse: bool = False, **kwargs) -> None:
    if reverse or action not in ("post_add", "post_remove", "post_clear"):
        return
    audit_record(
        action="api_key.rescope",
        organization_id=instance.organization_id,
        target_type="api_key",
        target_id=instance.pk,
        target_label=f"{instance.name} ({instance.prefix}…)",
        detail={"change": action.removeprefix("post_"), "servers": sorted(pk_set or [])},
    )


def connect_m2m() -> None:
    from accounts.models import ApiKey

    signals.m2m_changed.connect(
        _key_rescoped, sender=ApiKey.servers.through, dispatch_uid="audit-key-rescope"
    )


connect_m2m()


@receiver(auth_signals.user_logged_in)
def _logged_in(sender, request, user, **kwargs) -> None:
    address = request_address(request) if request is not None else None
    audit_record(
        action="auth.login",
        organization_id=None,
        target_type="user",
        target_id=user.pk,
        target_label=user.email,
        actor=Actor("user", str(user.pk), user.email, address),
    )


@receiver(auth_signals.user_login_failed)
def _login_failed(sender, credentials, request=None, **kwargs) -> None:
    request = request or current_request()
    # Only the name tried: Django has already replaced anything password-like in `credentials`.
    tried = str(credentials.get("username") or credentials.get("email") or "")[:300]
    audit_record(
        action="auth.login_failed",
        organization_id=None,
        target_type="user",
        target_label=tried,
        actor=Actor("system", "", "anonymous", request_address(request)),
    )


@receiver(auth_signals.user_logged_out)
def _logged_out(sender, request, user, **kwargs) -> None:
    if user is None:
        return
    audit_record(
        action="auth.logout",
        organization_id=None,
        target_type="user",
        target_id=user.pk,
        target_label=user.email,
        actor=Actor("user", str(user.pk), user.email, request_address(request)),
    )
