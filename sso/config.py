"""Configuring an organization's single sign-on: the one service the dashboard page and the API
call (admins and owners, accounts.policy Action.SSO_MANAGE); every change is an audit row."""

import re

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts import policy
from accounts.models import Organization, User
from accounts.policy import Action
from audit import events

from .models import SSO_ROLES, Connection
from .sessions import end_password_sessions

DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
FIELDS = (
    "issuer",
    "client_id",
    "allowed_domains",
    "default_role",
    "groups_claim",
    "role_mapping",
    "required",
    "enabled",
)


def connection_of(organization: Organization) -> Connection | None:
    return Connection.objects.filter(organization=organization).first()


def describe(connection: Connection) -> dict:
    """What the dashboard and the API show: everything but the secret, of which only whether
    one is set."""
    return {
        **{name: getattr(connection, name) for name in FIELDS},
        "client_secret_set": connection.has_client_secret,
    }


def _audited(connection: Connection) -> dict:
    # "client_secret_set" would be redacted by its name (audit/record.py): renamed to stay legible.
    values = describe(connection)
    values["has_client_credential"] = values.pop("client_secret_set")
    return values


def clean_domains(values) -> list[str]:
    if isinstance(values, str):
        values = re.split(r"[\s,]+", values)
    domains = sorted({str(v).strip().lower().lstrip("@") for v in values or [] if str(v).strip()})
    wrong = [d for d in domains if not DOMAIN.match(d)]
    if wrong:
        raise ValidationError({"allowed_domains": f"Not an email domain: {', '.join(wrong)}."})
    return domains


def clean_mapping(mapping) -> dict[str, str]:
    if not isinstance(mapping, dict):
        raise ValidationError({"role_mapping": "A mapping of group to role."})
    allowed = dict(SSO_ROLES)
    cleaned = {}
    for group, role in mapping.items():
        if role not in allowed:
            raise ValidationError(
                {"role_mapping": f"{group}: {role!r} is not one of {', '.join(allowed)}."}
            )
        if str(group).strip():
            cleaned[str(group).strip()] = role
    return cleaned


def clean_issuer(issuer: str) -> str:
    issuer = (issuer or "").strip()
    if not issuer.startswith(("https://", "http://")):
        raise ValidationError({"issuer": "The issuer is an https:// URL."})
    return issuer


def save(*, actor: User, organization: Organization, values: dict) -> Connection:
    """Creates or updates the organization's connection from `values` (any of FIELDS, and
    `client_secret`: empty or absent keeps the stored one)."""
    policy.require(user=actor, org=organization, action=Action.SSO_MANAGE)
    with transaction.atomic():
        connection = (
            Connection.objects.select_for_update().filter(organization=organization).first()
        )
        created = connection is None
        if connection is None:
            connection = Connection(organization=organization)
        before = None if created else _audited(connection)
        was_required = not created and connection.required and connection.enabled
        if "issuer" in values:
            connection.issuer = clean_issuer(values["issuer"])
        if "client_id" in values:
            connection.client_id = str(values["client_id"]).strip()
        if "allowed_domains" in values:
            connection.allowed_domains = clean_domains(values["allowed_domains"])
        if "role_mapping" in values:
            connection.role_mapping = clean_mapping(values["role_mapping"])
        if "default_role" in values:
            if values["default_role"] not in dict(SSO_ROLES):
                raise ValidationError({"default_role": "Owners are made by hand, not by SSO."})
            connection.default_role = values["default_role"]
        if "groups_claim" in values:
            connection.groups_claim = str(values["groups_claim"]).strip() or "groups"
        for flag in ("required", "enabled"):
            if flag in values:
                setattr(connection, flag, bool(values[flag]))
        if values.get("client_secret"):
            connection.set_client_secret(str(values["client_secret"]))
        problems = {}
        if not connection.issuer:
            problems["issuer"] = "The provider's issuer is required."
        if not connection.client_id:
            problems["client_id"] = "The client ID is required."
        if not connection.allowed_domains:
            problems["allowed_domains"] = "Name at least one email domain."
        if problems:
            raise ValidationError(problems)
        connection.save()
        events.sso_config_changed(
            connection,
            "config_create" if created else "config_update",
            before=before,
            after=_audited(connection),
        )
        if connection.required and connection.enabled and not was_required:
            end_password_sessions(organization)
    return connection


def delete(*, actor: User, organization: Organization) -> bool:
    policy.require(user=actor, org=organization, action=Action.SSO_MANAGE)
    connection = connection_of(organization)
    if connection is None:
        return False
    with transaction.atomic():
        events.sso_config_changed(connection, "config_delete", before=_audited(connection))
        connection.delete()
    return True
