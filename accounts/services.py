"""Organizations, memberships and invitations: what the dashboard views (and anything else)
call. Every function checks the policy itself, so no caller can forget to.

Membership is by consent: `membership_invite` only records an Invitation and emails a signed,
expiring link; the membership exists once the invited person, logged in as that address,
accepts it (`invitation_accept`). Nobody's account is created by an invitation.
"""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from audit import events as audit_events

from . import billing, deprovision, policy, throttle
from .models import Invitation, Membership, Organization, User
from .policy import Action

SALT = "accounts.invitation"


class InvitationInvalid(Exception):
    """The link is malformed, tampered with, expired, used, declined or revoked."""


class InvitationNotYours(Exception):
    """The link is valid but addressed to another email than the logged-in user's."""


def _ttl() -> timedelta:
    return timedelta(days=settings.INVITATION_TTL_DAYS)


def _digest(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


def invitation_link(*, invitation: Invitation, nonce: str) -> str:
    token = signing.dumps([invitation.pk, nonce], salt=SALT, compress=True)
    path = reverse("accounts:invitation", args=[token])
    return settings.SITE_URL.rstrip("/") + path


def organization_create(*, user: User, name: str) -> Membership:
    """A new organization that `user` owns and pays for; billing.OrganizationLimitReached (a
    ValidationError) when they already pay for as many as one person may."""
    with transaction.atomic():
        billing.require_room(user)
        org = Organization.create_with_free_slug(
            name=name, base=slugify(name)[:60] or "org", billing_owner=user
        )
        return Membership.objects.create(organization=org, user=user, role=Membership.OWNER)


def membership_invite(*, actor: User, organization: Organization, email: str, role: str):
    """Record a pending invitation and email its link. Inviting an address again replaces
    its pending invitation (new link, new role, new expiry). Returns the Invitation."""
    email = email.strip().lower()
    policy.require(user=actor, org=organization, action=Action.MEMBERS_MANAGE)
    if role not in dict(Membership.ROLES):
        raise ValidationError({"role": "Pick a valid role."})
    if role == Membership.OWNER:
        policy.require(user=actor, org=organization, action=Action.OWNERS_MANAGE)
    if organization.memberships.filter(user__email__iexact=email).exists():
        raise ValidationError({"email": "This person is already a member."})
    if not throttle.invitation_allowed(organization_id=organization.pk, email=email):
        # Invitations are mail to someone else's inbox: an organization must not flood it.
        raise ValidationError(
            {
                "email": "Too many invitations sent recently (to this address or from this "
                "organization). Try again later."
            }
        )
    return _invitation_send(organization=organization, email=email, role=role, invited_by=actor)


def _invitation_send(
    *, organization: Organization, email: str, role: str, invited_by: User | None
) -> Invitation:
    nonce = secrets.token_urlsafe(24)
    with transaction.atomic():
        organization.invitations.filter(email=email, state=Invitation.PENDING).update(
            state=Invitation.REVOKED, responded_at=timezone.now(), responded_by=invited_by
        )
        invitation = Invitation.objects.create(
            organization=organization,
            email=email,
            role=role,
            invited_by=invited_by,
            nonce_digest=_digest(nonce),
            expires_at=timezone.now() + _ttl(),
        )
        audit_events.invitation_sent(invitation)
    _send_invitation(invitation, invitation_link(invitation=invitation, nonce=nonce))
    return invitation


def invitation_from_directory(*, organization: Organization, email: str, role: str) -> Invitation:
    """The invitation an organization's identity provider (scim/) asks for when it provisions
    someone who has a getmcp account outside the organization: an account is never pulled in
    without its owner's consent. No policy check (the SCIM token is the caller's authority);
    an open invitation to the address is returned as it is, so a provider retrying the create
    does not mail the person again, and so is a declined one (the provider does not get to ask
    again; an admin may invite them by hand). Owners are never invited this way."""
    email = email.strip().lower()
    if role == Membership.OWNER or role not in dict(Membership.ROLES):
        role = Membership.MEMBER
    latest = organization.invitations.filter(email=email).order_by("-created_at").first()
    if latest is not None and (
        latest.state == Invitation.DECLINED
        or (latest.state == Invitation.PENDING and latest.expires_at > timezone.now())
    ):
        # Open: the person has it. Declined: asking again is for a person (an admin's invite).
        return latest
    if not throttle.invitation_allowed(organization_id=organization.pk, email=email):
        raise ValidationError({"email": "Too many invitations sent recently to this address."})
    return _invitation_send(organization=organization, email=email, role=role, invited_by=None)


def _send_invitation(invitation: Invitation, link: str) -> None:
    org, inviter = invitation.organization, invitation.invited_by
    has_account = User.objects.filter(email__iexact=invitation.email).exists()
    how = (
        "Open the link, log in as this address and accept (or decline) it:"
        if has_account
        else "Open the link to create your account with this address, then accept it:"
    )
    days = settings.INVITATION_TTL_DAYS
    send_mail(
        f"Invitation to {org.name} on getmcp",
        f"{inviter.email if inviter else f'The identity provider of {org.name}'} invited you to join “{org.name}” as "
        f"{invitation.get_role_display().lower()}.\n\n{how}\n{link}\n\n"
        f"The link works once and expires in {days} day{'s' if days != 1 else ''}. "
        "Nothing changes until you accept; if you did not expect this, ignore it.\n",
        None,
        [invitation.email],
    )


def invitation_from_token(token: str) -> Invitation:
    """The open invitation a link names; InvitationInvalid otherwise (one message for every
    reason, so a guessed or altered link learns nothing)."""
    try:
        pk, nonce = signing.loads(
            token, salt=SALT, max_age=_ttl() + timedelta(seconds=60)
        )  # the row's own expiry is the real limit; max_age bounds a leaked signing key's use
        invitation = Invitation.objects.select_related("organization", "invited_by").get(
            pk=int(pk), nonce_digest=_digest(str(nonce))
        )
    except (signing.BadSignature, ValueError, TypeError, Invitation.DoesNotExist):
        raise InvitationInvalid("This invitation link is invalid or has expired.") from None
    if not invitation.is_open:
        raise InvitationInvalid("This invitation link is invalid or has expired.")
    return invitation


def _addressed_to(invitation: Invitation, user: User) -> None:
    if not user.is_authenticated or user.email.lower() != invitation.email.lower():
        raise InvitationNotYours(
            f"This invitation is for {invitation.email}. Log in with that address to answer it."
        )


def _respond(invitation: Invitation, user: User, state: str) -> Invitation:
    """Move a pending invitation to `state` exactly once, even with two clicks racing."""
    changed = Invitation.objects.filter(
        pk=invitation.pk, state=Invitation.PENDING, expires_at__gt=timezone.now()
    ).update(state=state, responded_at=timezone.now(), responded_by=user)
    if not changed:
        raise InvitationInvalid("This invitation link is invalid or has expired.")
    invitation.refresh_from_db()
    audit_events.invitation_answered(invitation, state, user)
    return invitation


def invitation_accept(*, user: User, invitation: Invitation) -> Membership:
    """The invited person says yes: the membership starts now, with the invited role. It does
    not change the user's personal organization."""
    _addressed_to(invitation, user)
    with transaction.atomic():
        _respond(invitation, user, Invitation.ACCEPTED)
        try:
            with transaction.atomic():
                return Membership.objects.create(
                    organization=invitation.organization, user=user, role=invitation.role
                )
        except IntegrityError:
            # Already a member (joined through another invitation): keep the current role.
            return Membership.objects.get(organization=invitation.organization, user=user)


def invitation_decline(*, user: User, invitation: Invitation) -> Invitation:
    _addressed_to(invitation, user)
    return _respond(invitation, user, Invitation.DECLINED)


def invitation_revoke(*, actor: User, invitation: Invitation) -> Invitation:
    policy.require(user=actor, org=invitation.organization, action=Action.MEMBERS_MANAGE)
    if invitation.role == Membership.OWNER:
        policy.require(user=actor, org=invitation.organization, action=Action.OWNERS_MANAGE)
    return _respond(invitation, actor, Invitation.REVOKED)


def invitations_pending_for(*, user: User):
    return Invitation.objects.filter(
        email__iexact=user.email, state=Invitation.PENDING, expires_at__gt=timezone.now()
    ).select_related("organization", "invited_by")


def invitations_pending_in(*, organization: Organization):
    return organization.invitations.filter(
        state=Invitation.PENDING, expires_at__gt=timezone.now()
    ).select_related("invited_by")


def _owners_left(organization: Organization, without: Membership) -> int:
    return organization.memberships.filter(role=Membership.OWNER).exclude(pk=without.pk).count()


def membership_change_role(*, actor: User, membership: Membership, role: str) -> Membership:
    org = membership.organization
    policy.require(user=actor, org=org, action=Action.MEMBERS_MANAGE)
    if role not in dict(Membership.ROLES):
        raise ValidationError("Pick a valid role.")
    if Membership.OWNER in (role, membership.role):
        policy.require(user=actor, org=org, action=Action.OWNERS_MANAGE)
    demoting_owner = membership.role == Membership.OWNER and role != Membership.OWNER
    if demoting_owner and not _owners_left(org, membership):
        raise ValidationError("An organization needs at least one owner.")
    with transaction.atomic():
        if demoting_owner:
            billing.pass_on(org, leaving=membership.user)
        old_role, membership.role = membership.role, role
        membership.save(update_fields=["role"])
        audit_events.role_changed(membership, old_role)
    return membership


def membership_remove(*, actor: User, membership: Membership) -> None:
    """Remove someone (owners and admins; only owners remove owners), or leave (anyone)."""
    org = membership.organization
    if membership.user_id != actor.pk:
        policy.require(user=actor, org=org, action=Action.MEMBERS_MANAGE)
        if membership.role == Membership.OWNER:
            policy.require(user=actor, org=org, action=Action.OWNERS_MANAGE)
    if membership.role == Membership.OWNER and not _owners_left(org, membership):
        raise ValidationError("An organization needs at least one owner.")
    left = membership.user_id == actor.pk
    with transaction.atomic():
        audit_events.member_removed(membership, left=left)
        try:
            # Keys, grants, sessions, streams, sockets and connected accounts end with it.
            deprovision.member_deprovision(
                organization=org,
                user=membership.user,
                reason="member.leave" if left else "member.remove",
            )
        except ValueError as exc:  # the last owner, raced by another removal
            raise ValidationError(str(exc)) from None
