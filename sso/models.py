"""Single sign-on per organization: its OpenID Connect connection and the identities people
signed in with (docs/sso.md)."""

from django.conf import settings
from django.db import models

from accounts.models import Membership, Organization
from vault import crypto

# Roles single sign-on may give: owners are made by hand only (docs/sso.md, break-glass).
SSO_ROLES = [r for r in Membership.ROLES if r[0] != Membership.OWNER]


class Connection(models.Model):
    """One organization's OpenID provider. The client secret is encrypted with the vault's keys
    (vault/crypto.py) and never shown again once saved."""

    organization = models.OneToOneField(Organization, models.CASCADE, related_name="sso_connection")
    issuer = models.URLField(max_length=500, help_text="The provider's issuer identifier.")
    client_id = models.CharField(max_length=255)
    client_secret_ciphertext = models.TextField(blank=True, editable=False)
    # Lower-cased email domains ("corp.example") whose people may sign in through it.
    allowed_domains = models.JSONField(default=list, blank=True)
    default_role = models.CharField(max_length=10, choices=SSO_ROLES, default=Membership.MEMBER)
    groups_claim = models.CharField(max_length=100, default="groups")
    # {group name or id: role}; the highest role of the person's mapped groups wins.
    role_mapping = models.JSONField(default=dict, blank=True)
    # Password sign-in refuses this organization's members (owners keep it: break-glass).
    required = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"SSO of {self.organization} ({self.issuer})"

    @property
    def has_client_secret(self) -> bool:
        return bool(self.client_secret_ciphertext)

    def set_client_secret(self, value: str) -> None:
        self.client_secret_ciphertext = crypto.encrypt(value) if value else ""

    def client_secret(self) -> str:
        """The secret, for the token request only."""
        return (
            crypto.decrypt(self.client_secret_ciphertext) if self.client_secret_ciphertext else ""
        )


class Identity(models.Model):
    """A person as the organization's provider knows them: its `sub` for them, linked to the
    account they sign in to here."""

    connection = models.ForeignKey(Connection, models.CASCADE, related_name="identities")
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, related_name="sso_identities"
    )
    email = models.EmailField()
    groups = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["connection", "subject"], name="one_identity_per_sub"),
            models.UniqueConstraint(fields=["connection", "user"], name="one_identity_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.email} ({self.subject}) via {self.connection.organization}"
