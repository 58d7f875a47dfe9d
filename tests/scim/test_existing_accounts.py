"""SCIM never pulls an existing getmcp account into an organization without its owner's consent:
a create for the address of an account outside the organization invites that person (once) and
answers 409 saying so; after they accept, the provider's next create links the account. New
addresses get a new account, and members are linked, as before."""

import orjson
import pytest
from django.core import mail
from django.test import Client

from accounts import services
from accounts.models import Invitation, Membership, User
from scim import tokens
from scim.models import ScimUser

pytestmark = pytest.mark.django_db
SCIM = "application/scim+json"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"


@pytest.fixture
def directory(org, user):
    token = tokens.token_rotate(actor=user, organization=org)
    tokens.settings_update(actor=user, organization=org, default_role="member", group_roles={})
    return token


def create(token: str, email: str):
    return Client().post(
        "/scim/v2/Users",
        orjson.dumps({"schemas": [USER], "userName": email, "active": True}),
        content_type=SCIM,
        headers={"authorization": f"Bearer {token}"},
    )


def test_an_account_outside_the_organization_is_invited_not_added(org, directory):
    someone = User.objects.create_user("sam@elsewhere.example", "a long enough password")

    refused = create(directory, "Sam@Elsewhere.example")

    assert refused.status_code == 409
    body = refused.json()
    assert body["scimType"] == "uniqueness"
    assert body["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]
    assert "invitation was sent" in body["detail"]
    assert not Membership.objects.filter(organization=org, user=someone).exists()
    assert not ScimUser.objects.filter(organization=org).exists()
    invitation = Invitation.objects.get(organization=org, email="sam@elsewhere.example")
    assert invitation.state == Invitation.PENDING and invitation.role == Membership.MEMBER
    assert [m.to for m in mail.outbox] == [["sam@elsewhere.example"]]
    assert "identity provider" in mail.outbox[0].body

    # The provider retries (Okta and Entra do): still refused, and no second mail.
    assert create(directory, "sam@elsewhere.example").status_code == 409
    assert len(mail.outbox) == 1
    assert Invitation.objects.filter(organization=org, state=Invitation.PENDING).count() == 1


def test_once_the_person_accepts_the_provider_s_next_create_links_the_account(org, directory):
    someone = User.objects.create_user("sam@elsewhere.example", "a long enough password")
    create(directory, "sam@elsewhere.example")
    invitation = Invitation.objects.get(organization=org, email="sam@elsewhere.example")
    services.invitation_accept(user=someone, invitation=invitation)

    created = create(directory, "sam@elsewhere.example")

    assert created.status_code == 201, created.content
    assert ScimUser.objects.get(uid=created.json()["id"]).user == someone
    assert Membership.objects.get(organization=org, user=someone).role == Membership.MEMBER


def test_a_new_address_gets_a_new_account_without_an_invitation(org, directory):
    created = create(directory, "new@corp.example")

    assert created.status_code == 201
    assert Membership.objects.filter(organization=org, user__email="new@corp.example").exists()
    assert not Invitation.objects.filter(organization=org).exists()
    assert mail.outbox == []


def test_a_declined_invitation_keeps_the_account_out(org, directory):
    someone = User.objects.create_user("sam@elsewhere.example", "a long enough password")
    create(directory, "sam@elsewhere.example")
    invitation = Invitation.objects.get(organization=org, email="sam@elsewhere.example")
    services.invitation_decline(user=someone, invitation=invitation)

    refused = create(directory, "sam@elsewhere.example")

    assert refused.status_code == 409 and "declined" in refused.json()["detail"]
    assert not Membership.objects.filter(organization=org, user=someone).exists()
    assert len(mail.outbox) == 1  # the provider does not get to ask again
