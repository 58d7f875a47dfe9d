""" "SSO required" switched on ends the open password sessions of the organization's members who
are not owners; sessions that signed in through SSO, owners' sessions and people of other
organizations keep theirs."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Membership, User
from sso import config
from sso.models import Connection
from sso.sessions import SSO_SIGN_IN, mark_sso_sign_in
from tests.sso.conftest import member

pytestmark = pytest.mark.django_db
PASSWORD = "a long enough password"


def signed_in_with_password(email: str, password: str = PASSWORD) -> Client:
    browser = Client()
    response = browser.post(reverse("accounts:login"), {"username": email, "password": password})
    assert response.status_code == 302, "the password sign-in did not go through"
    assert SSO_SIGN_IN not in browser.session
    return browser


def reaches_the_dashboard(browser: Client) -> bool:
    """Signed in: the dashboard (after its redirect to the servers page); signed out: the
    sign-in page."""
    response = browser.get(reverse("dashboard:home"), follow=True)
    assert response.status_code == 200
    return response.request["PATH_INFO"] != reverse("accounts:login")


def test_switching_sso_required_on_signs_members_password_sessions_out(connection, user):
    org = connection.organization
    member(org, "bob@corp.example", Membership.MEMBER)
    member(org, "ann@corp.example", Membership.ADMIN)
    bob = signed_in_with_password("bob@corp.example")
    ann = signed_in_with_password("ann@corp.example")
    owner = signed_in_with_password(user.email, "correct horse battery staple")
    elsewhere = User.objects.create_user("eve@other.example", PASSWORD)
    eve = signed_in_with_password(elsewhere.email)
    assert all(reaches_the_dashboard(b) for b in (bob, ann, owner, eve))

    config.save(actor=user, organization=org, values={"required": True})

    assert not reaches_the_dashboard(bob)
    assert not reaches_the_dashboard(ann)
    assert reaches_the_dashboard(owner)  # owners keep the break-glass password
    assert reaches_the_dashboard(eve)  # not a member of this organization


def test_a_session_that_signed_in_through_sso_survives_the_switch(connection, user):
    org = connection.organization
    carol = member(org, "carol@corp.example", Membership.MEMBER)
    browser = Client()
    browser.force_login(carol)
    session = browser.session
    mark_sso_sign_in(session, org)  # what sso/views.py callback does after login()
    session.save()

    config.save(actor=user, organization=org, values={"required": True})

    assert reaches_the_dashboard(browser)


def test_saving_other_settings_while_sso_is_required_signs_nobody_out(connection, user):
    org = connection.organization
    config.save(actor=user, organization=org, values={"required": True})
    dan = member(org, "dan@corp.example", Membership.MEMBER)
    browser = Client()
    browser.force_login(dan)  # e.g. a session from before an owner demoted dan

    config.save(actor=user, organization=org, values={"groups_claim": "roles"})

    assert reaches_the_dashboard(browser)


def test_disabled_sso_marked_required_signs_nobody_out(connection, user):
    org = connection.organization
    member(org, "bob@corp.example", Membership.MEMBER)
    bob = signed_in_with_password("bob@corp.example")

    config.save(actor=user, organization=org, values={"required": True, "enabled": False})

    assert reaches_the_dashboard(bob)


def test_the_admin_who_switches_it_on_with_a_password_session_signs_in_through_sso_next(
    connection,
):
    org = connection.organization
    member(org, "ann@corp.example", Membership.ADMIN)
    ann = signed_in_with_password("ann@corp.example")
    session = ann.session
    session["current_org_id"] = org.pk
    session.save()

    switched = ann.post(
        reverse("sso:settings"),
        {
            "issuer": connection.issuer,
            "client_id": connection.client_id,
            "client_secret": "",
            "allowed_domains": "corp.example",
            "default_role": "viewer",
            "groups_claim": "groups",
            "role_mapping": "",
            "required": "on",
            "enabled": "on",
        },
    )

    assert switched.status_code == 302
    assert Connection.objects.get(pk=connection.pk).required
    assert not reaches_the_dashboard(ann)
