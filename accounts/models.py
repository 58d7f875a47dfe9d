import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import IntegrityError, models, transaction
from django.utils import timezone
from django.utils.text import slugify

from . import billing

KEY_PREFIX = "gmcp_"


class UserManager(BaseUserManager):
    use_in_migrations = True

    def create_user(self, email, password=None, **extra):
        if not email:
            raise ValueError("An email address is required.")
        email = self.normalize_email(email).lower()
        with transaction.atomic():
            user = self.model(email=email, **extra)
            user.set_password(password)
            user.save(using=self._db)
            Organization.create_personal(user)
        return user

    def create_superuser(self, email, password=None, **extra):
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)
    # Where the user's own things go when nothing else is named (API and commands without an
    # organization, the dashboard's first page). Set once at sign-up and never inferred from
    # memberships: an invitation someone else sends must not change where a user's data lands.
    personal_org = models.ForeignKey(
        "accounts.Organization",
        models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="personal organization",
    )

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"

    def __str__(self) -> str:
        return self.email

    def organizations(self):
        return Organization.objects.filter(memberships__user=self)

    def personal_organization(self):
        """The explicit personal organization. If it is gone, or the user no longer belongs to
        it, a fresh one is made: never another organization the user happens to be in. A user
        who already pays for as many organizations as one person may gets the oldest of those
        instead (one of their own, not one they were invited to)."""
        org = self.personal_org
        if org is not None and Membership.objects.filter(organization=org, user=self).exists():
            return org
        try:
            return Organization.create_personal(self)
        except billing.OrganizationLimitReached:
            own = (
                Organization.objects.filter(billing_owner=self, memberships__user=self)
                .order_by("created_at", "id")
                .first()
            )
            if own is None:
                raise
            self.personal_org = own
            self.save(update_fields=["personal_org"])
            return own


class Organization(models.Model):
    name = models.CharField(max_length=150)
    slug = models.SlugField(max_length=80, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Quotas (servers/quotas.py, docs/quotas.md); None means the deployment's default setting.
    monthly_call_quota = models.PositiveIntegerField(null=True, blank=True)
    task_concurrency = models.PositiveIntegerField(null=True, blank=True)
    # The paying account: the person this organization's use counts against where a share is
    # per person (sandbox workers, stored results, organizations per person; accounts/billing.py).
    # Its creator; passed to another owner when that person leaves or stops being an owner.
    billing_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        models.SET_NULL,
        null=True,
        blank=True,
        related_name="billed_organizations",
    )

    def __str__(self) -> str:
        return self.name

    # Tries before giving up on a free slug; each try is one INSERT, so a race costs a retry.
    SLUG_TRIES = 20

    @classmethod
    def create_with_free_slug(
        cls, *, name: str, base: str, numbered: bool = True, billing_owner=None
    ):
        """The one place organization slugs are chosen: `base`, else `base-2`, `base-3`, ...
        (`numbered`) or `base-<6 hex>`. Race-free: the unique constraint decides, and a taken
        slug is retried inside a savepoint, so two concurrent creations never both pass a
        check and then collide. Must run inside a transaction (callers hold one)."""
        base = base[: cls._meta.get_field("slug").max_length - 7] or "org"
        for attempt in range(1, cls.SLUG_TRIES + 1):
            if attempt == 1:
                slug = base
            elif numbered:
                slug = f"{base}-{attempt}"
            else:
                slug = f"{base}-{secrets.token_hex(3)}"
            try:
                with transaction.atomic():
                    return cls.objects.create(name=name, slug=slug, billing_owner=billing_owner)
            except IntegrityError:
                if not cls.objects.filter(slug=slug).exists():
                    raise  # another constraint failed: not a slug clash
        # Numbered slugs all taken this far: fall back to random suffixes, still checked.
        return cls.create_with_free_slug(
            name=name, base=f"{base}-{secrets.token_hex(3)}", billing_owner=billing_owner
        )

    @classmethod
    def create_personal(cls, user):
        """A new personal organization that `user` owns and pays for; OrganizationLimitReached
        when they already pay for as many as one person may."""
        with transaction.atomic():
            billing.require_room(user)
            org = cls.create_with_free_slug(
                name=personal_organization_name(user),
                base=slugify(user.email.split("@")[0]) or "org",
                numbered=False,
                billing_owner=user,
            )
            Membership.objects.create(organization=org, user=user, role=Membership.OWNER)
            user.personal_org = org
            user.save(update_fields=["personal_org"])
        return org


def personal_organization_name(user) -> str:
    """ "Grace Hopper's organization" when a name was given at sign-up, else the email's."""
    owner = (getattr(user, "name", "") or "").strip() or user.email
    max_length = Organization._meta.get_field("name").max_length
    return f"{owner}'s organization"[:max_length]


class Membership(models.Model):
    OWNER, ADMIN, MEMBER, VIEWER = "owner", "admin", "member", "viewer"
    ROLES = [(OWNER, "Owner"), (ADMIN, "Admin"), (MEMBER, "Member"), (VIEWER, "Viewer")]

    organization = models.ForeignKey(Organization, models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="one_membership_per_org")
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"


def digest_key(raw: str) -> str:
    # Keys carry 256 bits of randomness, so a fast unsalted hash is enough and keeps lookups O(1).
    return hashlib.sha256(raw.encode()).hexdigest()


class ServiceAccount(models.Model):
    """An organization's machine identity: an explicit role, created by admins. Its keys act as
    it, so a CI job or a backend keeps working when the person who set it up leaves
    (docs/roles.md, "Service accounts")."""

    ROLES = [("member", "Member"), ("admin", "Admin")]

    organization = models.ForeignKey(Organization, models.CASCADE, related_name="service_accounts")
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=10, choices=ROLES, default="member")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A disabled account's keys are suspended (refused, not revoked): enabling it lifts that.
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "name"], name="service_account_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} (service account of {self.organization})"


class ApiKey(models.Model):
    organization = models.ForeignKey(Organization, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    servers = models.ManyToManyField("servers.Server", blank=True, related_name="api_keys")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The principal a key acts as: its service account when set, otherwise its creator (a
    # personal key). gateway/endpoint/auth.py:key_holder judges it by that principal's role.
    service_account = models.ForeignKey(
        ServiceAccount, models.SET_NULL, null=True, blank=True, related_name="api_keys"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Per-tool access (servers/access.py): {"<server id>": {"tools": [...], "resources": [...],
    # "prompts": [...]}}; a server or list left out is not limited.
    access = models.JSONField(default=dict, blank=True)
    # Calls per minute on each server, and per tool: {"perMinute": 60, "tools": {"name": 5}}.
    limits = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(
        cls, organization, name, servers=(), expires_at=None, created_by=None, service_account=None
    ):
        """Create a key; returns (key, raw). The raw key is never stored and cannot be shown again."""
        raw = KEY_PREFIX + secrets.token_urlsafe(32)
        with transaction.atomic():
            key = cls.objects.create(
                organization=organization,
                name=name,
                prefix=raw[: len(KEY_PREFIX) + 6],
                digest=digest_key(raw),
                expires_at=expires_at,
                created_by=created_by,
                service_account=service_account,
            )
            if servers:
                key.servers.set(servers)
        return key, raw

    @property
    def principal_label(self) -> str:
        """Who the key acts as, for lists and logs."""
        if self.service_account_id:
            return f"service account {self.service_account.name}"
        return self.created_by.email if self.created_by else "nobody (revoked)"

    def revoke(self) -> None:
        self.revoked_at = timezone.now()
        self.save(update_fields=["revoked_at"])

    @property
    def is_active(self):
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @classmethod
    def revoke_keys_only_for(cls, server) -> int:
        """Revoke the active keys limited to this server alone: once it is gone their server
        list would be empty, and an empty list means every server of the organization."""
        limited = server.api_keys.filter(revoked_at=None).values_list("pk", flat=True)
        keys = (
            cls.objects.filter(pk__in=list(limited))
            .annotate(server_count=models.Count("servers"))
            .filter(server_count=1)
        )
        revoked = 0
        for key in keys:
            key.revoke()
            revoked += 1
        return revoked

    def allows(self, server) -> bool:
        if server.organization_id != self.organization_id:
            return False
        allowed = [s.pk for s in self.servers.all()]
        return not allowed or server.pk in allowed


class Invitation(models.Model):
    """An offer of membership. Nothing changes for the invited person until they accept it,
    logged in as the invited address, through the signed link emailed to them
    (accounts.services.invitation_accept); they may decline it, and the inviting side may
    revoke it while it is pending. The link's nonce is stored as a digest only."""

    PENDING, ACCEPTED, DECLINED, REVOKED = "pending", "accepted", "declined", "revoked"
    STATES = [
        (PENDING, "Pending"),
        (ACCEPTED, "Accepted"),
        (DECLINED, "Declined"),
        (REVOKED, "Revoked"),
    ]

    organization = models.ForeignKey(Organization, models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Membership.ROLES, default=Membership.MEMBER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    nonce_digest = models.CharField(max_length=64, unique=True, editable=False)
    state = models.CharField(max_length=10, choices=STATES, default=PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    responded_at = models.DateTimeField(null=True, blank=True)
    responded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "email"],
                condition=models.Q(state="pending"),
                name="one_pending_invitation_per_address",
            )
        ]

    def __str__(self) -> str:
        return f"{self.email} to {self.organization} ({self.state})"

    @property
    def is_open(self) -> bool:
        return self.state == self.PENDING and self.expires_at > timezone.now()
