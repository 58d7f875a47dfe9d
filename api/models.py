import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import digest_key

TOKEN_PREFIX = "gpat_"
# last_used_at is a hint for people, not an audit trail: one write a minute per token is enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class PersonalAccessToken(models.Model):
    """A user's credential for the management API. Only its digest is stored; it acts for its
    user in every organization the user is a member of, and stops working once revoked."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.CASCADE, related_name="personal_access_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, user, name: str, expires_at=None) -> tuple["PersonalAccessToken", str]:
        """Create a token; returns (token, raw). The raw token cannot be shown again."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user,
            name=name,
            prefix=raw[: len(TOKEN_PREFIX) + 6],
            digest=digest_key(raw),
            expires_at=expires_at,
        )
        return token, raw

    @classmethod
    def find_active(cls, raw: str) -> "PersonalAccessToken | None":
        token = cls.objects.select_related("user").filter(digest=digest_key(raw)).first()
        if token is None or not token.is_active or not token.user.is_active:
            return None
        return token

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or now - self.last_used_at >= LAST_USED_RESOLUTION:
            type(self).objects.filter(pk=self.pk).update(last_used_at=now)
            self.last_used_at = now

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (
            self.expires_at is None or self.expires_at > timezone.now()
        )
