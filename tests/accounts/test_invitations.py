"""Membership by consent: an invitation changes nothing until the invited person accepts it
through the emailed link, logged in as the invited address."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone
from django.utils.html import escape

from accounts import services
from accounts.models import Invitation, Membership, User

LINK = re.compile(r"https?://[^/\s]+(/invitations/[^/\s]+/)")


@pytest.fixture
def bob(db):
    return User.objects.create_user("bob@example.com", "bob's long passphrase")


def invite(org, actor, email, role="member"):
    mail.outbox.clear()
    invitation = services.membership_invite(actor=actor, organization=org, email=email, role=role)
    (path,) = LINK.findall(mail.outbox[-1].body)
    return invitation, path


def test_the_emailed_link_asks_and_only_a_post_by_the_invited_user_accepts(client, org, user, bob):
    invitation, path = invite(org, user, bob.email, role="admin")
    client.force_login(bob)
    page = client.get(path)
    assert page.status_code == 200
    assert b"Accept and join" in page.content
    assert not Membership.objects.filter(organization=org, user=bob).exists()

    response = client.post(path, {"answer": "accept"})
    assert response.status_code == 302
    assert Membership.objects.get(organization=org, user=bob).role == "admin"
    invitation.refresh_from_db()
    assert (invitation.state, invitation.responded_by) == ("accepted", bob)


def test_accepting_keeps_the_users_own_personal_organization(client, org, user, bob):
    own = bob.personal_org
    _, path = invite(org, user, bob.email)
    client.force_login(bob)
    client.post(path, {"answer": "accept"})
    bob.refresh_from_db()
    assert bob.personal_org == own
    assert bob.personal_organization() == own


def test_the_link_works_once(client, org, user, bob):
    _, path = invite(org, user, bob.email)
    client.force_login(bob)
    client.post(path, {"answer": "accept"})
    Membership.objects.filter(organization=org, user=bob).delete()
    again = client.post(path, {"answer": "accept"})
    assert again.status_code == 404
    assert not Membership.objects.filter(organization=org, user=bob).exists()


def test_another_logged_in_user_cannot_accept_someone_elses_invitation(
    client, org, user, bob, outsider
):
    invitation, path = invite(org, user, bob.email)
    client.force_login(outsider)
    response = client.post(path, {"answer": "accept"})
    assert response.status_code == 403
    assert b"bob@example.com" in response.content
    assert not Membership.objects.filter(organization=org, user=outsider).exists()
    invitation.refresh_from_db()
    assert invitation.state == "pending"


def test_an_expired_link_is_refused(client, org, user, bob):
    invitation, path = invite(org, user, bob.email)
    Invitation.objects.filter(pk=invitation.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    client.force_login(bob)
    assert client.post(path, {"answer": "accept"}).status_code == 404
    assert not Membership.objects.filter(organization=org, user=bob).exists()


@pytest.mark.parametrize(
    "tamper",
    [
        lambda token: token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
        lambda token: "x" + token,
        lambda token: "garbage",
    ],
)
def test_an_altered_link_is_refused_like_an_unknown_one(client, org, user, bob, tamper):
    _, path = invite(org, user, bob.email)
    token = path.split("/")[2]
    client.force_login(bob)
    response = client.post(f"/invitations/{tamper(token)}/", {"answer": "accept"})
    assert response.status_code == 404
    assert not Membership.objects.filter(organization=org, user=bob).exists()


def test_a_revoked_invitation_can_no_longer_be_accepted(client, org, user, bob):
    invitation, path = invite(org, user, bob.email)
    services.invitation_revoke(actor=user, invitation=invitation)
    client.force_login(bob)
    assert client.post(path, {"answer": "accept"}).status_code == 404
    assert not Membership.objects.filter(organization=org, user=bob).exists()


def test_the_invited_person_declines(client, org, user, bob):
    invitation, path = invite(org, user, bob.email)
    client.force_login(bob)
    client.post(path, {"answer": "decline"})
    invitation.refresh_from_db()
    assert invitation.state == "declined"
    assert not Membership.objects.filter(organization=org, user=bob).exists()
    assert client.post(path, {"answer": "accept"}).status_code == 404


def test_the_invitee_sees_pending_invitations_and_answers_from_the_dashboard(
    client, org, user, bob
):
    accepted, _ = invite(org, user, bob.email)
    other = services.organization_create(user=user, name="Second").organization
    declined, _ = invite(other, user, bob.email)
    client.force_login(bob)
    listing = client.get("/invitations/")
    assert escape(org.name).encode() in listing.content and b"Second" in listing.content
    client.post(f"/invitations/{accepted.pk}/accept/")
    client.post(f"/invitations/{declined.pk}/decline/")
    assert Membership.objects.filter(organization=org, user=bob).exists()
    assert not Membership.objects.filter(organization=other, user=bob).exists()
    declined.refresh_from_db()
    assert declined.state == "declined"


def test_nobody_else_can_answer_an_invitation_by_its_number(client, org, user, bob, outsider):
    invitation, _ = invite(org, user, bob.email)
    client.force_login(outsider)
    assert client.post(f"/invitations/{invitation.pk}/accept/").status_code == 404
    assert not Membership.objects.filter(organization=org, user=outsider).exists()


def test_an_invited_address_without_an_account_signs_up_from_the_link_then_accepts(
    client, org, user
):
    _, path = invite(org, user, "carol@example.com")
    assert not User.objects.filter(email="carol@example.com").exists()
    page = client.get(path)
    assert page.status_code == 200
    signup = re.search(rb'href="(/signup/\?[^"]+)"', page.content).group(1).decode()
    signup = signup.replace("&amp;", "&")
    form = client.get(signup)
    assert b'value="carol@example.com"' in form.content
    response = client.post(
        signup,
        {"email": "carol@example.com", "password": "carol's long passphrase", "name": "Carol"},
    )
    assert response.status_code == 302 and response["Location"] == path
    carol = User.objects.get(email="carol@example.com")
    assert not Membership.objects.filter(organization=org, user=carol).exists()
    client.post(path, {"answer": "accept"})
    assert Membership.objects.filter(organization=org, user=carol).exists()
    carol.refresh_from_db()
    assert carol.personal_org != org


def test_inviting_again_replaces_the_pending_invitation_and_its_link(client, org, user, bob):
    first, old_path = invite(org, user, bob.email)
    second, new_path = invite(org, user, bob.email, role="viewer")
    first.refresh_from_db()
    assert first.state == "revoked"
    client.force_login(bob)
    assert client.post(old_path, {"answer": "accept"}).status_code == 404
    client.post(new_path, {"answer": "accept"})
    assert Membership.objects.get(organization=org, user=bob).role == "viewer"


def test_an_admin_cannot_invite_an_owner_nor_revoke_an_owner_invitation(org, user, bob, outsider):
    Membership.objects.create(organization=org, user=outsider, role="admin")
    with pytest.raises(services.policy.PermissionDenied):
        services.membership_invite(
            actor=outsider, organization=org, email="x@example.com", role="owner"
        )
    owner_invitation, _ = invite(org, user, bob.email, role="owner")
    with pytest.raises(services.policy.PermissionDenied):
        services.invitation_revoke(actor=outsider, invitation=owner_invitation)


def test_a_user_who_left_their_personal_organization_gets_a_new_one_not_an_older_one(
    org, user, outsider, outsider_org
):
    Membership.objects.create(organization=outsider_org, user=user, role="member")
    Membership.objects.create(organization=org, user=outsider, role="owner")
    Membership.objects.filter(organization=org, user=user).delete()
    user.refresh_from_db()
    fresh = user.personal_organization()
    assert fresh not in (org, outsider_org)
    assert Membership.objects.get(organization=fresh, user=user).role == "owner"
    user.refresh_from_db()
    assert user.personal_org == fresh
