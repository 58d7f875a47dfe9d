from django.core import mail

from accounts.models import Invitation, Membership, Organization, User
from dashboard.scoping import SESSION_KEY


def test_creating_an_organization_makes_me_its_owner_and_switches_to_it(member_client, user):
    response = member_client.post("/organizations/new/", {"name": "Acme Inc"})
    assert response.status_code == 302
    org = Organization.objects.get(name="Acme Inc", memberships__user=user)
    assert Membership.objects.get(organization=org, user=user).role == "owner"
    assert member_client.session[SESSION_KEY] == org.pk


def test_inviting_someone_without_an_account_creates_no_account_and_emails_a_link(
    member_client, org
):
    response = member_client.post(
        "/organization/members/", {"email": "bob@example.com", "role": "admin"}
    )
    assert response.status_code == 302
    assert not User.objects.filter(email="bob@example.com").exists()
    invitation = Invitation.objects.get(organization=org, email="bob@example.com")
    assert (invitation.state, invitation.role) == ("pending", "admin")
    assert len(mail.outbox) == 1
    assert "/invitations/" in mail.outbox[0].body
    assert "create your account" in mail.outbox[0].body


def test_inviting_an_existing_user_adds_nobody_until_they_accept(member_client, org, outsider):
    member_client.post("/organization/members/", {"email": outsider.email, "role": "member"})
    assert not Membership.objects.filter(organization=org, user=outsider).exists()
    assert Invitation.objects.get(organization=org, email=outsider.email).state == "pending"
    assert "log in as this address" in mail.outbox[0].body


def test_pending_invitations_are_listed_for_the_inviting_side_with_revoke(member_client, org):
    member_client.post("/organization/members/", {"email": "bob@example.com", "role": "member"})
    page = member_client.get("/organization/members/")
    assert b"bob@example.com" in page.content
    invitation = Invitation.objects.get(email="bob@example.com")
    assert f"/organization/invitations/{invitation.pk}/revoke/".encode() in page.content
    member_client.post(f"/organization/invitations/{invitation.pk}/revoke/")
    invitation.refresh_from_db()
    assert invitation.state == "revoked"
    after = member_client.get("/organization/members/").content
    assert f"/organization/invitations/{invitation.pk}/revoke/".encode() not in after


def test_inviting_a_member_twice_is_an_error_next_to_the_email(member_client, user):
    response = member_client.post("/organization/members/", {"email": user.email, "role": "member"})
    assert "email" in response.context["form"].errors


def test_a_plain_member_cannot_invite(client, org, outsider):
    Membership.objects.create(organization=org, user=outsider, role="member")
    client.force_login(outsider)
    client.post("/organizations/switch/", {"organization": org.slug})
    response = client.post("/organization/members/", {"email": "eve@example.com", "role": "owner"})
    assert response.status_code == 403
    assert not Invitation.objects.filter(email="eve@example.com").exists()


def test_an_admin_cannot_make_owners(client, org, outsider):
    Membership.objects.create(organization=org, user=outsider, role="admin")
    client.force_login(outsider)
    client.post("/organizations/switch/", {"organization": org.slug})
    response = client.post("/organization/members/", {"email": "eve@example.com", "role": "owner"})
    assert "role" in response.context["form"].errors


def test_the_last_owner_cannot_leave(member_client, org, user):
    mine = Membership.objects.get(organization=org, user=user)
    member_client.post(f"/organization/members/{mine.pk}/remove/")
    assert Membership.objects.filter(pk=mine.pk).exists()


def test_changing_a_role(member_client, org, outsider):
    theirs = Membership.objects.create(organization=org, user=outsider, role="member")
    member_client.post(f"/organization/members/{theirs.pk}/role/", {"role": "admin"})
    theirs.refresh_from_db()
    assert theirs.role == "admin"


def test_members_of_another_organization_are_out_of_reach(member_client, outsider_org, outsider):
    theirs = Membership.objects.get(organization=outsider_org, user=outsider)
    assert member_client.post(f"/organization/members/{theirs.pk}/remove/").status_code == 404
    assert (
        member_client.post(
            f"/organization/members/{theirs.pk}/role/", {"role": "member"}
        ).status_code
        == 404
    )


def test_retention_is_saved(member_client, org):
    from activity.retention import retention_days

    member_client.post("/organization/", {"retention_days": "7"})
    assert retention_days(org) == 7
    response = member_client.post("/organization/", {"retention_days": "-3"})
    assert response.status_code == 200
    assert retention_days(org) == 7
