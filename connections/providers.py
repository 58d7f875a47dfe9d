"""Admins configure an organization's OAuth 2.0 providers (accounts.policy decides who may);
the client secret is encrypted at once and never shown again, only whether one is set."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from accounts import policy
from accounts.models import Organization, User
from accounts.policy import Action
from audit import events as audit_events

from .models import Provider
from .presets import PRESETS, preset_fields

FIELDS = (
    "name",
    "authorization_url",
    "token_url",
    "revocation_url",
    "client_id",
    "client_auth",
    "scopes",
    "scope_separator",
    "pkce",
    "extra_authorize_params",
    "account_mode",
)
ACCOUNT_MODES = {Provider.PER_USER, Provider.SHARED}
CLIENT_AUTHS = {"client_secret_post", "client_secret_basic"}


def describe(provider: Provider) -> dict[str, Any]:
    """What surfaces show: every field but the secret, which reads as set or not."""
    data = {name: getattr(provider, name) for name in FIELDS}
    data.update(
        id=provider.pk,
        key=provider.key,
        preset=provider.preset,
        clientSecretSet=bool(provider.client_secret_ciphertext),
    )
    return data


def _check(values: dict[str, Any]) -> dict[str, Any]:
    errors: dict[str, str] = {}
    url = URLValidator(schemes=["https", "http"])
    for name in ("authorization_url", "token_url", "revocation_url"):
        value = values.get(name) or ""
        if not value and name == "revocation_url":
            continue
        try:
            url(value)
        except ValidationError:
            errors[name] = "Give a full http(s) URL."
    if not (values.get("client_id") or "").strip():
        errors["client_id"] = "The client id the provider gave this application."
    scopes = values.get("scopes") or []
    if isinstance(scopes, str):
        scopes = [s for s in scopes.replace(",", " ").split() if s]
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        errors["scopes"] = "A list of scope names."
    values["scopes"] = scopes
    extra = values.get("extra_authorize_params") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        errors["extra_authorize_params"] = "An object of string parameters."
    reserved = {"client_id", "redirect_uri", "state", "code_challenge", "response_type", "scope"}
    if isinstance(extra, dict) and reserved & set(extra):
        errors["extra_authorize_params"] = (
            f"These are set by getmcp: {', '.join(sorted(reserved & set(extra)))}."
        )
    values["extra_authorize_params"] = extra
    if values.get("account_mode", Provider.PER_USER) not in ACCOUNT_MODES:
        errors["account_mode"] = "per_user or shared."
    if values.get("client_auth", "client_secret_post") not in CLIENT_AUTHS:
        errors["client_auth"] = "client_secret_post or client_secret_basic."
    if errors:
        raise ValidationError(errors)
    return values


def provider_create(
    *,
    actor: User,
    organization: Organization,
    preset: str = "generic",
    key: str = "",
    client_secret: str = "",
    **values: Any,
) -> Provider:
    policy.require(user=actor, org=organization, action=Action.CONNECTIONS_MANAGE)
    if preset != "generic" and preset not in PRESETS:
        raise ValidationError({"preset": f"One of generic, {', '.join(PRESETS)}."})
    filled = {
        **preset_fields(preset),
        **{k: v for k, v in values.items() if k in FIELDS and v not in (None, "")},
    }
    filled.setdefault("name", key or preset)
    key = slugify(key or (preset if preset != "generic" else filled["name"]))[:50]
    if not key:
        raise ValidationError({"key": "Give the provider a short name tools use, like github."})
    filled = _check(filled)
    provider = Provider(organization=organization, key=key, preset=preset, **filled)
    provider.set_client_secret(client_secret)
    try:
        with transaction.atomic():
            provider.save()
    except IntegrityError:
        raise ValidationError(
            {"key": f"This organization already has a provider {key!r}."}
        ) from None
    audit_events.provider_changed(provider, "create", after=describe(provider))
    return provider


def provider_update(
    *, actor: User, provider: Provider, client_secret: str | None = None, **values: Any
) -> Provider:
    policy.require(user=actor, org=provider.organization, action=Action.CONNECTIONS_MANAGE)
    before = describe(provider)
    merged = {
        **{name: getattr(provider, name) for name in FIELDS},
        **{k: v for k, v in values.items() if k in FIELDS and v is not None},
    }
    merged = _check(merged)
    for name, value in merged.items():
        setattr(provider, name, value)
    if client_secret:
        provider.set_client_secret(client_secret)
    provider.save()
    after = describe(provider)
    if client_secret:
        after["clientSecretChanged"] = True
    audit_events.provider_changed(provider, "update", before=before, after=after)
    return provider


def provider_delete(*, actor: User, provider: Provider) -> None:
    policy.require(user=actor, org=provider.organization, action=Action.CONNECTIONS_MANAGE)
    before = describe(provider)
    audit_events.provider_changed(provider, "delete", before=before)
    provider.delete()
