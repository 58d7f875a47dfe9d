"""Secrets of an organization (optionally of one server) and its extra outbound network ranges."""

import ipaddress

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from . import crypto

SECRET_NAME_RE = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"


class Secret(models.Model):
    """A value referenced by name as `{{ secrets.NAME }}` in http tool configs.

    Write-only: the value can be replaced but never read back through any API; only the http
    kind decrypts it, at call time. A server-scoped secret overrides an organization-wide one of
    the same name for that server.
    """

    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="secrets"
    )
    server = models.ForeignKey(
        "servers.Server", models.CASCADE, null=True, blank=True, related_name="secrets"
    )
    name = models.CharField(
        max_length=64,
        validators=[
            RegexValidator(SECRET_NAME_RE, "Letters, digits and _, not starting with a digit.")
        ],
    )
    ciphertext = models.TextField(editable=False)
    test_ciphertext = models.TextField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "name"],
                condition=Q(server__isnull=True),
                name="secret_name_per_org",
            ),
            models.UniqueConstraint(
                fields=["organization", "server", "name"],
                condition=Q(server__isnull=False),
                name="secret_name_per_server",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<Secret {self.name} org={self.organization_id} server={self.server_id}>"

    def clean(self):
        if self.server_id and self.server.organization_id != self.organization_id:
            raise ValidationError({"server": "The server belongs to another organization."})

    def set_value(self, value: str) -> None:
        self.ciphertext = crypto.encrypt(value)

    def set_test_value(self, value: str | None) -> None:
        self.test_ciphertext = None if value is None else crypto.encrypt(value)

    def reveal(self, *, test: bool = False) -> str:
        """The plaintext; only the http kind's resolver calls this. A test run falls back to the
        live value when no test value was set."""
        if test and self.test_ciphertext:
            return crypto.decrypt(self.test_ciphertext)
        return crypto.decrypt(self.ciphertext)

    def describe(self) -> dict:
        """What APIs and exports may show: never a value."""
        return {
            "name": self.name,
            "server": self.server.slug if self.server_id else None,
            "hasTestValue": bool(self.test_ciphertext),
            "createdAt": self.created_at.isoformat() if self.created_at else None,
            "updatedAt": self.updated_at.isoformat() if self.updated_at else None,
        }

    @classmethod
    def store(cls, organization, name: str, value: str, *, test_value=None, server=None):
        """Create or replace a secret; returns it (its value can no longer be read back)."""
        secret = cls.objects.filter(organization=organization, server=server, name=name).first()
        if secret is None:
            secret = cls(organization=organization, server=server, name=name)
        secret.set_value(value)
        if test_value is not None:
            secret.set_test_value(test_value)
        secret.full_clean()
        secret.save()
        return secret


def validate_cidr(value: str) -> None:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError as exc:
        raise ValidationError(f"{value!r} is not an IP network (e.g. 10.1.0.0/16).") from exc


class NetworkAllowance(models.Model):
    """A range an organization's outbound fetches may reach despite the SSRF guard.

    Set by staff only (admin), for customers whose APIs are self-hosted on private networks.
    """

    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="network_allowances"
    )
    cidr = models.CharField(max_length=64, validators=[validate_cidr])
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "cidr"], name="one_allowance_per_cidr")
        ]

    def __str__(self) -> str:
        return f"{self.cidr} for {self.organization}"
