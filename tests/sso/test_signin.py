"""Who verified ID token claims sign in as: just-in-time membership with the default role, the
role the groups claim maps to on every sign-in (up and down, owners untouched), and accounts
linked only where the organization already has them."""

import pytest

from accounts.models import Membership, User
from audit.models import AuditEvent
from sso.models import Identity
from sso.oidc import SsoError
from sso.signin import sign_in
from tests.sso.conftest import member

pytestmark = pytest.mark.django_db


def claims(sub="sub-ada", email="ada@corp.example", groups=(), **more):
    return {"sub": sub, "email": email, "name": "Ada L", "groups": list(groups), **more}


def test_a_newcomer_joins_with_the_default_role_and_a_new_account(connection):
    result = sign_in(connection=connection, claims=claims())

    assert result.created_user and result.created_membership
    assert result.user.email == "ada@corp.example" and not result.user.has_usable_password()
    assert result.membership.role == Membership.VIEWER
    assert Identity.objects.get(connection=connection, subject="sub-ada").user == result.user
    joined = AuditEvent.objects.get(action="sso.join", organization_id=connection.organization_id)
    assert joined.target_label == "ada@corp.example"


def test_a_newcomer_in_a_mapped_group_joins_with_the_mapped_role(connection):
    result = sign_in(
        connection=connection, claims=claims(groups=["engineering", "platform-admins"])
    )
    assert result.membership.role == Membership.ADMIN


def test_each_sign_in_sets_the_role_the_groups_map_to_up_and_down(connection):
    sign_in(connection=connection, claims=claims(groups=["engineering"]))
    up = sign_in(connection=connection, claims=claims(groups=["platform-admins"]))
    assert up.membership.role == Membership.ADMIN

    down = sign_in(connection=connection, claims=claims(groups=["marketing"]))
    assert down.membership.role == Membership.VIEWER  # no mapped group: the default role
    changes = AuditEvent.objects.filter(
        action="member.role_change", organization_id=connection.organization_id
    )
    assert [c.diff["after"]["role"] for c in changes.order_by("id")] == ["admin", "viewer"]


def test_a_role_given_by_hand_is_not_widened_beyond_the_mapping(connection):
    person = member(connection.organization, "ada@corp.example", Membership.ADMIN)
    result = sign_in(connection=connection, claims=claims(groups=["engineering"]))
    assert result.user == person
    assert Membership.objects.get(user=person, organization=connection.organization).role == (
        Membership.MEMBER
    )


def test_owners_keep_their_role_whatever_the_groups_say(connection):
    owner = connection.organization.memberships.get(role=Membership.OWNER).user
    owner.email = "boss@corp.example"
    owner.save()
    result = sign_in(
        connection=connection, claims=claims(sub="sub-boss", email="boss@corp.example")
    )
    assert result.membership.role == Membership.OWNER


def test_without_a_mapping_an_existing_member_keeps_the_role_they_have(connection):
    connection.role_mapping = {}
    connection.save()
    member(connection.organization, "ada@corp.example", Membership.ADMIN)
    result = sign_in(connection=connection, claims=claims(groups=["engineering"]))
    assert result.membership.role == Membership.ADMIN


def test_a_mapping_never_makes_an_owner(connection):
    connection.role_mapping = {"root": Membership.OWNER}
    connection.save()
    result = sign_in(connection=connection, claims=claims(groups=["root"]))
    assert result.membership.role == Membership.VIEWER


def test_the_subject_seen_before_signs_in_to_the_same_account_after_an_email_change(connection):
    first = sign_in(connection=connection, claims=claims())
    again = sign_in(connection=connection, claims=claims(email="ada.lovelace@corp.example"))
    assert again.user == first.user
    assert User.objects.filter(email__endswith="@corp.example").count() == 1


def test_an_email_outside_the_allowed_domains_is_refused(connection):
    with pytest.raises(SsoError, match="not in a domain allowed"):
        sign_in(connection=connection, claims=claims(email="ada@gmail.com"))
    assert not User.objects.filter(email="ada@gmail.com").exists()


def test_an_email_the_provider_did_not_verify_is_refused(connection):
    with pytest.raises(SsoError, match="not verified"):
        sign_in(connection=connection, claims=claims(email_verified=False))


def test_an_account_outside_the_organization_is_not_taken_over(connection):
    stranger = User.objects.create_user("ada@corp.example", "their own password")
    with pytest.raises(SsoError, match="not a member"):
        sign_in(connection=connection, claims=claims())
    assert not Membership.objects.filter(user=stranger, organization=connection.organization)
    assert not Identity.objects.filter(connection=connection).exists()
    assert not Identity.objects.filter(user=stranger).exists()


def test_a_deactivated_account_is_refused(connection):
    person = member(connection.organization, "ada@corp.example", Membership.MEMBER)
    person.is_active = False
    person.save()
    with pytest.raises(SsoError, match="deactivated"):
        sign_in(connection=connection, claims=claims())


def test_a_disabled_connection_signs_nobody_in(connection):
    connection.enabled = False
    connection.save()
    with pytest.raises(SsoError, match="turned off"):
        sign_in(connection=connection, claims=claims())


def test_an_address_reassigned_to_a_new_subject_does_not_get_the_old_holder_s_account(connection):
    first = sign_in(connection=connection, claims=claims(sub="sub-old"))
    with pytest.raises(SsoError, match="linked to another identity"):
        sign_in(connection=connection, claims=claims(sub="sub-new"))
    identities = Identity.objects.filter(connection=connection)
    assert list(identities.values_list("subject", "user")) == [("sub-old", first.user.pk)]
