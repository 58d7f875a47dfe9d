""" "SSO required": the password form refuses the organization's members, says why, and does not
count it as a failed attempt; owners still sign in with their password (break-glass), each time
an audit row of the organization."""

import pytest
from django.urls import reverse

from accounts.models import Membership
from audit.models import AuditEvent
from tests.sso.conftest import member

pytestmark = pytest.mark.django_db
PASSWORD = "a long enough password"


def password_sign_in(client, email, password=PASSWORD):
    return client.post(reverse("accounts:login"), {"username": email, "password": password})


def test_a_member_signs_in_with_a_password_while_sso_is_optional(client, connection):
    member(connection.organization, "bob@corp.example", Membership.MEMBER)
    response = password_sign_in(client, "bob@corp.example")
    assert response.status_code == 302


def test_sso_required_refuses_a_member_s_right_password_and_says_why(client, connection):
    connection.required = True
    connection.save()
    member(connection.organization, "bob@corp.example", Membership.ADMIN)

    response = password_sign_in(client, "bob@corp.example")

    assert response.status_code == 200
    assert "requires single sign-on" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # Not a failed attempt: repeating it never locks the account for the SSO sign-in.
    for _ in range(12):
        password_sign_in(client, "bob@corp.example")
    assert (
        "Too many failed attempts"
        not in password_sign_in(client, "bob@corp.example").content.decode()
    )


def test_sso_required_still_says_wrong_password_for_a_wrong_password(client, connection):
    connection.required = True
    connection.save()
    member(connection.organization, "bob@corp.example", Membership.MEMBER)
    response = password_sign_in(client, "bob@corp.example", "not the password")
    assert "correct email and password" in response.content.decode()


def test_an_owner_keeps_the_password_as_break_glass_and_it_is_audited(client, connection, user):
    connection.required = True
    connection.save()

    response = password_sign_in(client, user.email, "correct horse battery staple")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(user.pk)
    row = AuditEvent.objects.get(action="sso.break_glass", actor_label=user.email)
    assert row.organization_id == connection.organization_id
    assert row.actor_label == user.email


def test_a_disabled_connection_requires_nothing(client, connection):
    connection.required = True
    connection.enabled = False
    connection.save()
    member(connection.organization, "bob@corp.example", Membership.MEMBER)
    assert password_sign_in(client, "bob@corp.example").status_code == 302


def test_the_sign_in_page_offers_sign_in_with_sso(client):
    page = client.get(reverse("accounts:login") + "?next=/servers/").content.decode()
    assert 'href="/sso/?next=/servers/"' in page and "Sign in with SSO" in page
