"""SCIM 2.0 provisioning per organization (docs/scim.md).

`Directory` is an organization's SCIM configuration: the digest of its bearer token (the token
itself is shown once, when an admin creates or rotates it), the role a provisioned person gets
when no group names one, and the mapping from group names to roles. `ScimUser` is a person as
the identity provider sees them in that organization (the SCIM User resource): it outlives a
deactivation (active=false removes the membership, active=true brings it back), and goes with
DELETE. `ScimGroup` is a SCIM Group resource; its members' role follows the mapping.
"""

import uuid

from django.conf import settings
from django.db import models

from accounts.models import Organization

# Roles a SCIM mapping may give: never owner (an identity provider must not take over an
# organization; owners are made in getmcp).
ROLES = [("admin", "Admin"), ("member", "Member"), ("viewer", "Viewer")]


class Directory(models.Model):
    organization = models.OneToOneField(Organization, models.CASCADE, related_name="scim_directory")
    token_digest = models.CharField(max_length=64, unique=True, null=True, blank=True)
    token_prefix = models.CharField(max_length=16, blank=True)
    token_created_at = models.DateTimeField(null=True, blank=True)
    default_role = models.CharField(max_length=10, choices=ROLES, default="member")
    # {"<group displayName>": "<role>"}: the highest role of a person's mapped groups wins.
    group_roles = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "directories"

    def __str__(self) -> str:
        return f"SCIM directory of {self.organization}"


class ScimUser(models.Model):
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, models.CASCADE, related_name="scim_users")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="scim_users")
    user_name = models.CharField(max_length=254)
    external_id = models.CharField(max_length=255, blank=True)
    active = models.BooleanField(default=True)
    # name, displayName, emails, ... as the provider last sent them (returned as they are).
    attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "user"], name="scim_user_per_org"),
            models.UniqueConstraint(
                fields=["organization", "user_name"], name="scim_user_name_per_org"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_name} in {self.organization}"


class ScimGroup(models.Model):
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    organization = models.ForeignKey(Organization, models.CASCADE, related_name="scim_groups")
    display_name = models.CharField(max_length=255)
    external_id = models.CharField(max_length=255, blank=True)
    members = models.ManyToManyField(ScimUser, blank=True, related_name="groups")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "display_name"], name="scim_group_name_per_org"
            )
        ]

    def __str__(self) -> str:
        return f"{self.display_name} in {self.organization}"
