"""Consent pages that stay open while the same browser starts another authorization or signs in
again: the Allow on the first page still answers the first request (the 403 behind mcp-remote's
stalled flows), while forged and stale forms grant nothing."""

import re
from urllib.parse import urlencode

import pytest
from django.test import Client

from accounts.models import Membership
from tests.oauth.conftest import consent_token_of, grants_of, query_of

OWNER_PASSWORD = "long enough password 1"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def browser(db):
    """A client that, like a browser, is held to CSRF checks."""
    return Client(enforce_csrf_checks=True)


def sign_in(browser, user, next_url: str):
    page = browser.get("/login/?" + urlencode({"next": next_url}))
    token = CSRF.search(page.content.decode()).group(1)
    response = browser.post(
        "/login/",
        {
            "username": user.email,
            "password": OWNER_PASSWORD,
            "next": next_url,
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302, response.content
    return response


def open_consent(browser, params):
    page = browser.get("/oauth/authorize?" + urlencode(params))
    assert page.status_code == 200, page.content
    return page


def allow(browser, params, page, **headers):
    form = {**params, "decision": "allow", "consent_token": consent_token_of(page)}
    return browser.post("/oauth/authorize", form, **headers)


def test_two_authorizations_in_one_browser_each_get_their_own_code(
    browser, owner, authorize_params, exchange
):
    first, second = authorize_params(state="first"), authorize_params(state="second")
    sign_in(browser, owner, "/oauth/authorize?" + urlencode(first.params))
    first_page = open_consent(browser, first.params)
    second_page = open_consent(browser, second.params)

    answer = allow(browser, first.params, first_page)
    assert answer.status_code == 302, answer.content
    first_code = query_of(answer["Location"])
    assert first_code["state"] == "first"
    # The code is the first request's: its PKCE verifier redeems it.
    assert exchange(first_code["code"], first.verifier).status_code == 200

    answer = allow(browser, second.params, second_page)
    assert query_of(answer["Location"])["state"] == "second"
    assert exchange(query_of(answer["Location"])["code"], second.verifier).status_code == 200


def test_an_open_consent_page_still_works_after_signing_out_and_in_again_in_another_tab(
    browser, owner, authorize_params
):
    request = authorize_params()
    next_url = "/oauth/authorize?" + urlencode(request.params)
    sign_in(browser, owner, next_url)
    page = open_consent(browser, request.params)
    # Another tab signs out and in again: Django rotates the CSRF secret and the session key.
    # The form on the first page was rendered before that (Django's CSRF token in it would be
    # refused now: the 403 that left clients waiting for their callback).
    csrf = browser.cookies["csrftoken"].value
    assert browser.post("/logout/", {"csrfmiddlewaretoken": csrf}).status_code == 302
    sign_in(browser, owner, next_url)

    answer = allow(browser, request.params, page)
    assert answer.status_code == 302, answer.content
    assert query_of(answer["Location"])["code"].startswith("gmcp_ac_")


def test_someone_else_signing_in_meanwhile_is_asked_again(
    browser, owner, registered, authorize_params, django_user_model
):
    request = authorize_params()
    next_url = "/oauth/authorize?" + urlencode(request.params)
    sign_in(browser, owner, next_url)
    page = open_consent(browser, request.params)
    colleague = django_user_model.objects.create_user("colleague@example.com", OWNER_PASSWORD)
    Membership.objects.create(
        user=colleague, organization=owner.personal_organization(), role=Membership.MEMBER
    )
    csrf = browser.cookies["csrftoken"].value
    browser.post("/logout/", {"csrfmiddlewaretoken": csrf})
    sign_in(browser, colleague, next_url)

    answer = allow(browser, request.params, page)
    assert answer.status_code == 400
    assert "colleague@example.com" in answer.content.decode()
    assert not grants_of(registered).exists()


def test_a_cross_site_post_grants_nothing(browser, owner, registered, authorize_params):
    request = authorize_params()
    sign_in(browser, owner, "/oauth/authorize?" + urlencode(request.params))
    page = open_consent(browser, request.params)
    answer = allow(browser, request.params, page, HTTP_ORIGIN="https://evil.example.com")
    assert answer.status_code == 403
    assert not grants_of(registered).exists()


@pytest.mark.parametrize("flaw", ["missing", "tampered", "other_request", "other_user"])
def test_a_form_that_is_not_this_users_answer_to_this_request_shows_consent_again(
    browser, owner, registered, authorize_params, flaw, django_user_model
):
    request = authorize_params()
    sign_in(browser, owner, "/oauth/authorize?" + urlencode(request.params))
    page = open_consent(browser, request.params)
    token = consent_token_of(page)
    if flaw == "missing":
        token = ""
    elif flaw == "tampered":
        token = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    elif flaw == "other_request":
        token = consent_token_of(open_consent(browser, authorize_params(state="else").params))
    elif flaw == "other_user":
        other = django_user_model.objects.create_user("other@example.com", OWNER_PASSWORD)
        Membership.objects.create(
            user=other, organization=owner.personal_organization(), role=Membership.MEMBER
        )
        other_browser = Client()
        other_browser.force_login(other)
        token = consent_token_of(other_browser.get("/oauth/authorize?" + urlencode(request.params)))
        assert token  # a colleague's own, valid form for the same request
    form = {**request.params, "decision": "allow", "consent_token": token}
    answer = browser.post("/oauth/authorize", form)
    assert answer.status_code == 400
    assert "data-confirm-again" in answer.content.decode()
    assert consent_token_of(answer)  # a fresh form to confirm with
    assert not grants_of(registered).exists()
