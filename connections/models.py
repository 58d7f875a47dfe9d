"""An organization's OAuth 2.0 providers and the connections people (or the organization's one
shared account) hold with them. Every secret is stored encrypted (vault.crypto)."""

from django.conf import settings
from django.db import models

from vault import crypto


class Provider(models.Model):
    PER_USER, SHARED = "per_user", "shared"
    ACCOUNT_MODES = [
        (PER_USER, "Each person connects their own account"),
        (SHARED, "One shared account"),
    ]

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="oauth_providers"
    )
    # The name tools use: `connection: {provider: github}`, `connections["github"]`.
    key = models.SlugField(max_length=50)
    name = models.CharField(max_length=100)
    preset = models.CharField(max_length=30, default="generic")
    authorization_url = models.CharField(max_length=500)
    token_url = models.CharField(max_length=500)
    revocation_url = models.CharField(max_length=500, blank=True, default="")
    client_id = models.CharField(max_length=300)
    client_secret_ciphertext = models.TextField(blank=True, default="")
    # How the client authenticates at the token endpoint (RFC 6749 2.3.1).
    client_auth = models.CharField(
        max_length=30,
        default="client_secret_post",
        choices=[("client_secret_post", "In the body"), ("client_secret_basic", "HTTP Basic")],
    )
    scopes = models.JSONField(default=list, blank=True)  # asked for on every connect
    scope_separator = models.CharField(max_length=3, default=" ")
    pkce = models.BooleanField(default=True)
    extra_authorize_params = models.JSONField(default=dict, blank=True)
    account_mode = models.CharField(max_length=10, choices=ACCOUNT_MODES, default=PER_USER)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "key"], name="provider_key_per_org")
        ]
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.name} ({self.key})"

    def set_client_secret(self, value: str) -> None:
        self.client_secret_ciphertext = crypto.encrypt(value) if value else ""

    def client_secret(self) -> str:
        return (
            crypto.decrypt(self.client_secret_ciphertext) if self.client_secret_ciphertext else ""
        )

    @property
    def per_user(self) -> bool:
        return self.account_mode == self.PER_USER


class Connection(models.Model):
    """One account connected to a provider: a person's (per-user providers) or the
    organization's (a shared provider: user is None)."""

    ACTIVE, NEEDS_CONSENT, REVOKED = "active", "needs_consent", "revoked"

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="connections")
    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="oauth_connections"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="oauth_connections",
    )
    status = models.CharField(
        max_length=20,
        default=ACTIVE,
        choices=[(ACTIVE, "active"), (NEEDS_CONSENT, "needs consent"), (REVOKED, "revoked")],
    )
    access_token_ciphertext = models.TextField()
    refresh_token_ciphertext = models.TextField(blank=True, default="")
    token_type = models.CharField(max_length=30, default="Bearer")
    scopes = models.JSONField(default=list, blank=True)  # as granted
    expires_at = models.DateTimeField(null=True, blank=True)
    # Bumped on every token change, so a refresh that lost a race never writes over a newer one.
    version = models.PositiveIntegerField(default=1)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "user"], name="one_connection_per_person_and_provider"
            ),
            models.UniqueConstraint(
                fields=["provider"],
                condition=models.Q(user__isnull=True),
                name="one_shared_connection_per_provider",
            ),
        ]

    def __str__(self) -> str:
        who = self.user.email if self.user_id and self.user else "shared"
        return f"{self.provider.key} for {who}"

    def access_token(self) -> str:
        return crypto.decrypt(self.access_token_ciphertext)

    def refresh_token(self) -> str:
        return (
            crypto.decrypt(self.refresh_token_ciphertext) if self.refresh_token_ciphertext else ""
        )
