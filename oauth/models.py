"""The authorization server's state: clients, grants, codes and tokens (digests only).

A Grant is one user's consent for one client to use one server, as that user, inside the
server's organization. Codes, access tokens and refresh tokens all hang off a grant, so revoking
the grant (or the user's membership) ends every token issued under it.
"""

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone

SCOPE_MCP, SCOPE_READ, SCOPE_OFFLINE = "mcp", "mcp:read", "offline_access"
SCOPES = {
    SCOPE_MCP: "Use every tool, resource and prompt of the server",
    SCOPE_READ: "List and read the server's tools, resources and prompts (no tool calls)",
    SCOPE_OFFLINE: "Stay connected: renew access without asking again",
}


def digest_token(raw: str) -> str:
    # Tokens carry 256 bits of randomness: a fast unsalted hash is enough, like API keys.
    return hashlib.sha256(raw.encode()).hexdigest()


class Client(models.Model):
    REGISTERED, METADATA_DOCUMENT = "registered", "metadata_document"
    SERVICE_ACCOUNT = "service_account"
    KINDS = [
        (REGISTERED, "Self-registered (DCR)"),
        (METADATA_DOCUMENT, "Metadata document"),
        (SERVICE_ACCOUNT, "Service account credentials"),
    ]

    client_id = models.CharField(max_length=2000, unique=True)
    kind = models.CharField(max_length=20, choices=KINDS, default=REGISTERED)
    client_name = models.CharField(max_length=200, blank=True)
    client_uri = models.CharField(max_length=2000, blank=True)
    logo_uri = models.CharField(max_length=2000, blank=True)
    redirect_uris = models.JSONField(default=list)
    grant_types = models.JSONField(default=list)
    token_endpoint_auth_method = models.CharField(max_length=30, default="none")
    secret_digest = models.CharField(max_length=64, blank=True)
    scope = models.CharField(max_length=500, blank=True)
    software_id = models.CharField(max_length=200, blank=True)
    software_version = models.CharField(max_length=100, blank=True)
    registered_from = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the client first obtains a token: registrations never used are collected.
    first_used_at = models.DateTimeField(null=True, blank=True)
    # Metadata documents: when the fetched copy must be fetched again (its cache headers).
    metadata_expires_at = models.DateTimeField(null=True, blank=True)
    # Service-account credentials (client_credentials grant, oauth/service_clients.py): the
    # account its tokens act as, and for private_key_jwt the public keys its assertions are
    # signed with (a JWKS, RFC 7517; public parts only).
    service_account = models.ForeignKey(
        "accounts.ServiceAccount",
        models.CASCADE,
        null=True,
        blank=True,
        related_name="oauth_clients",
    )
    jwks = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        return self.client_name or self.client_id

    @property
    def is_public(self) -> bool:
        return self.token_endpoint_auth_method == "none"

    @property
    def verified(self) -> bool:
        return self.kind == self.METADATA_DOCUMENT


class Grant(models.Model):
    # How it came to be: a person's consent, an enterprise identity provider's assertion (ID-JAG,
    # acting as the member it names, no consent page), or a service account's client credentials.
    CONSENT, ID_JAG, CLIENT_CREDENTIALS = "consent", "id_jag", "client_credentials"
    SOURCES = [
        (CONSENT, "Consent"),
        (ID_JAG, "Enterprise identity provider (ID-JAG)"),
        (CLIENT_CREDENTIALS, "Client credentials"),
    ]

    # The person it acts as; None for a service account's grant (then service_account is set).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        models.CASCADE,
        null=True,
        blank=True,
        related_name="oauth_grants",
    )
    service_account = models.ForeignKey(
        "accounts.ServiceAccount",
        models.CASCADE,
        null=True,
        blank=True,
        related_name="oauth_grants",
    )
    source = models.CharField(max_length=20, choices=SOURCES, default=CONSENT)
    # ID-JAG grants: the trusted identity provider whose assertion made it.
    trusted_issuer = models.ForeignKey(
        "TrustedIssuer", models.CASCADE, null=True, blank=True, related_name="grants"
    )
    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="oauth_grants"
    )
    server = models.ForeignKey("servers.Server", models.CASCADE, related_name="oauth_grants")
    client = models.ForeignKey(Client, models.CASCADE, related_name="grants")
    scope = models.CharField(max_length=500)
    resource = models.CharField(max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=100, blank=True)
    # Per-tool access on the grant's server (servers/access.py): {"tools": [...], ...}.
    access = models.JSONField(default=dict, blank=True)
    # Calls per minute, and per tool: {"perMinute": 60, "tools": {"name": 5}}.
    limits = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [models.Index(fields=["user", "revoked_at"], name="oauth_grant_user_live")]
        constraints = [
            # It acts as exactly one principal: a person or a service account.
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, service_account__isnull=True)
                | models.Q(user__isnull=True, service_account__isnull=False),
                name="oauth_grant_one_principal",
            )
        ]

    def __str__(self) -> str:
        return f"{self.client} for {self.principal_label} on {self.server}"

    @property
    def principal_label(self) -> str:
        if self.service_account is not None:
            return f"service account {self.service_account.name}"
        return self.user.email if self.user is not None else "nobody"

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @property
    def scopes(self) -> list[str]:
        return self.scope.split()


class AuthorizationCode(models.Model):
    digest = models.CharField(max_length=64, unique=True)
    grant = models.ForeignKey(Grant, models.CASCADE, related_name="codes")
    redirect_uri = models.CharField(max_length=2000)
    code_challenge = models.CharField(max_length=128)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)


class AccessToken(models.Model):
    digest = models.CharField(max_length=64, unique=True)
    grant = models.ForeignKey(Grant, models.CASCADE, related_name="access_tokens")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)


class RefreshToken(models.Model):
    digest = models.CharField(max_length=64, unique=True)
    grant = models.ForeignKey(Grant, models.CASCADE, related_name="refresh_tokens")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    # Set when it was exchanged for a new pair; presenting it again after the grace window
    # is a replay, which revokes the whole grant.
    rotated_at = models.DateTimeField(null=True, blank=True)
    # The pair it was exchanged for, encrypted with the vault's keys (vault.crypto, readable for
    # the grace window only), so a repeated refresh within the window gets that same pair
    # (oauth/tokens.py). Emptied once the window is over: tokens are otherwise digests only.
    successor = models.TextField(blank=True, default="")

    def in_grace(self, now=None) -> bool:
        now = now or timezone.now()
        grace = settings.OAUTH_REFRESH_GRACE_SECONDS
        return self.rotated_at is not None and (now - self.rotated_at).total_seconds() <= grace


class TrustedIssuer(models.Model):
    """An enterprise identity provider an organization trusts to assert which of its members an
    MCP client acts for (Identity Assertion Authorization Grant, SEP-990; oauth/id_jag.py)."""

    # Mapping by SSO subject (the member's single sign-on identity) joins when SSO lands.
    BY_EMAIL, BY_SSO_SUBJECT = "email", "sso_subject"
    SUBJECT_MAPPINGS = [
        (BY_EMAIL, "By email (the assertion's email claim)"),
        (
            BY_SSO_SUBJECT,
            "By SSO subject (the assertion's sub, as the organization's single sign-on with the "
            "same issuer knows the person)",
        ),
    ]

    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="trusted_issuers"
    )
    name = models.CharField(max_length=100)
    issuer = models.CharField(max_length=2000)
    jwks_url = models.CharField(max_length=2000)
    # The `aud` its assertions must carry; empty: this authorization server's issuer URL.
    audience = models.CharField(max_length=2000, blank=True)
    # The client_ids (as registered here) whose assertions it may make; empty: any client.
    allowed_client_ids = models.JSONField(default=list, blank=True)
    subject_mapping = models.CharField(max_length=20, choices=SUBJECT_MAPPINGS, default=BY_EMAIL)
    enabled = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "issuer"], name="oauth_trusted_issuer_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.issuer}) trusted by {self.organization}"
