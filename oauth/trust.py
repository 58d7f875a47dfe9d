"""The enterprise identity providers an organization trusts for ID-JAG (oauth/id_jag.py): add,
change, disable, remove. Admins only (accounts/policy.py, TRUSTED_ISSUERS); every function checks
the policy itself and writes the audit row.

Disabling or removing a provider, or changing its issuer or keys, ends the tokens its
assertions obtained (their grants are revoked): they were issued on a trust that changed.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts import policy
from accounts.models import Organization, User
from accounts.policy import Action
from audit import events as audit_events

from . import redirects
from .grants import grant_revoke
from .models import Grant, TrustedIssuer

FIELDS = (
    "name",
    "issuer",
    "jwks_url",
    "audience",
    "allowed_client_ids",
    "subject_mapping",
    "enabled",
)
# Changing one of these re-bases the trust: what was issued under the old one ends.
REBASING = ("issuer", "jwks_url", "audience", "allowed_client_ids", "subject_mapping")


def _url(value, field: str, *, required: bool = True) -> str:
    value = (value or "").strip()
    if not value:
        if required:
            raise ValidationError({field: "Required."})
        return ""
    loopback = settings.OAUTH_JWKS_ALLOW_HTTP_LOOPBACK and redirects.is_loopback(value)
    if len(value) > 2000 or not (value.startswith("https://") or loopback):
        raise ValidationError({field: "An https URL."})
    return value


def clean(values: dict) -> dict:
    """The fields of a trusted issuer from a form or API body, checked."""
    name = (values.get("name") or "").strip()
    if not name or len(name) > 100:
        raise ValidationError({"name": "A name of 1 to 100 characters."})
    clients = values.get("allowed_client_ids") or []
    if isinstance(clients, str):
        clients = clients.replace(",", " ").split()
    if not isinstance(clients, list) or not all(
        isinstance(c, str) and 0 < len(c) <= 2000 for c in clients
    ):
        raise ValidationError({"allowed_client_ids": "A list of client ids."})
    mapping = values.get("subject_mapping") or TrustedIssuer.BY_EMAIL
    if mapping not in dict(TrustedIssuer.SUBJECT_MAPPINGS):
        raise ValidationError(
            {"subject_mapping": f"One of {', '.join(dict(TrustedIssuer.SUBJECT_MAPPINGS))}."}
        )
    return {
        "name": name,
        # Compared with the assertion's `iss` exactly, as the provider writes it.
        "issuer": _url(values.get("issuer"), "issuer"),
        "jwks_url": _url(values.get("jwks_url"), "jwks_url"),
        "audience": _url(values.get("audience"), "audience", required=False),
        "allowed_client_ids": clients,
        "subject_mapping": mapping,
        "enabled": bool(values.get("enabled", True)),
    }


def trusted_issuer_create(
    *, actor: User, organization: Organization, values: dict
) -> TrustedIssuer:
    policy.require(user=actor, org=organization, action=Action.TRUSTED_ISSUERS)
    fields = clean(values)
    try:
        with transaction.atomic():
            trust = TrustedIssuer.objects.create(
                organization=organization, created_by=actor, **fields
            )
    except IntegrityError:
        raise ValidationError({"issuer": "This organization trusts that issuer already."}) from None
    audit_events.trusted_issuer_changed(trust, "create", after=_shown(trust))
    return trust


def trusted_issuer_update(*, actor: User, trust: TrustedIssuer, values: dict) -> TrustedIssuer:
    policy.require(user=actor, org=trust.organization, action=Action.TRUSTED_ISSUERS)
    fields = clean({**_shown(trust), **values})
    before = _shown(trust)
    for name, value in fields.items():
        setattr(trust, name, value)
    try:
        with transaction.atomic():
            trust.save()
            after = _shown(trust)
            if not trust.enabled or any(before[f] != after[f] for f in REBASING):
                _revoke_grants(trust, "identity provider changed")
    except IntegrityError:
        raise ValidationError({"issuer": "This organization trusts that issuer already."}) from None
    if after != before:
        audit_events.trusted_issuer_changed(trust, "update", before=before, after=after)
    return trust


def trusted_issuer_delete(*, actor: User, trust: TrustedIssuer) -> None:
    policy.require(user=actor, org=trust.organization, action=Action.TRUSTED_ISSUERS)
    with transaction.atomic():
        _revoke_grants(trust, "identity provider removed")
        audit_events.trusted_issuer_changed(trust, "delete", before=_shown(trust))
        trust.delete()


def _revoke_grants(trust: TrustedIssuer, reason: str) -> None:
    for grant in Grant.objects.filter(trusted_issuer=trust, revoked_at=None):
        grant_revoke(grant=grant, reason=reason)


def _shown(trust: TrustedIssuer) -> dict:
    return {name: getattr(trust, name) for name in FIELDS}
