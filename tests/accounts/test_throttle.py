"""Login and password-reset throttling, per account and per source address, through the real
login and reset views (Django's test client; counters in the test Redis)."""

import re

from django.core import mail

from accounts.models import User
from tests.waiting import wait_until

PASSWORD = "correct horse battery staple"
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def login(client, email, password, address="198.51.100.7"):
    return client.post("/login/", {"username": email, "password": password}, REMOTE_ADDR=address)


def test_forty_wrong_passwords_then_the_right_one_is_not_accepted(client, user):
    for _ in range(40):
        assert login(client, user.email, "wrong guess").status_code in (200, 429)
    response = login(client, user.email, PASSWORD)
    assert response.status_code == 429
    assert "Too many failed attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert client.get("/servers/").status_code == 302


def test_the_account_lock_holds_whatever_address_the_guesses_come_from(client, user, settings):
    for n in range(settings.LOGIN_FAILURES_PER_ACCOUNT):
        login(client, user.email, "wrong", address=f"203.0.113.{n}")
    assert login(client, user.email, PASSWORD, address="192.0.2.200").status_code == 429


def test_one_address_guessing_many_accounts_is_locked_out_but_others_are_not(
    client, user, settings
):
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    for n in range(5):
        login(client, f"someone{n}@example.com", "wrong", address="203.0.113.9")
    assert login(client, user.email, PASSWORD, address="203.0.113.9").status_code == 429
    assert login(client, user.email, PASSWORD, address="192.0.2.1").status_code == 302


def test_unknown_and_existing_accounts_get_the_same_answers(client, user, settings):
    def answers(email):
        seen = []
        for _ in range(settings.LOGIN_FAILURES_PER_ACCOUNT + 1):
            response = login(client, email, "wrong", address="192.0.2.50")
            # The whole page, less what differs by design: the typed address, the CSRF token.
            page = CSRF.sub("", response.content.decode().replace(email, "EMAIL"))
            seen.append((response.status_code, page))
        return seen

    mine, unknown = answers(user.email), answers("nobody-at-all@example.com")
    assert [code for code, _ in mine][-1] == 429
    assert mine == unknown


def test_the_lock_ends_with_its_window(client, user, settings):
    # Long enough for the failed logins and the refused one to fit in it on a loaded machine.
    settings.LOGIN_THROTTLE_WINDOW_SECONDS = 3
    for _ in range(settings.LOGIN_FAILURES_PER_ACCOUNT):
        login(client, user.email, "wrong")
    assert login(client, user.email, PASSWORD).status_code == 429
    # The window is Redis's own expiry: wait for it to end (a deadline, not a fixed time).
    wait_until(
        lambda: login(client, user.email, PASSWORD).status_code == 302,
        timeout=10,
        interval=0.2,
        what="the login lock to end with its window",
    )


def test_twenty_reset_requests_to_one_address_send_at_most_the_cap(client, user, settings):
    for n in range(20):
        response = client.post(
            "/password-reset/", {"email": user.email}, REMOTE_ADDR=f"203.0.113.{n}"
        )
        assert response.status_code == 302
        assert response["Location"] == "/password-reset/sent/"
    assert len(mail.outbox) == settings.PASSWORD_RESETS_PER_ACCOUNT


def test_one_source_cannot_mail_many_addresses(client, db, settings):
    settings.PASSWORD_RESETS_PER_ADDRESS = 4
    people = [User.objects.create_user(f"p{n}@example.com", PASSWORD) for n in range(8)]
    for person in people:
        response = client.post(
            "/password-reset/", {"email": person.email}, REMOTE_ADDR="203.0.113.80"
        )
        assert response.status_code == 302
    assert len(mail.outbox) == 4


def test_throttled_resets_answer_like_unknown_addresses(client, user, settings):
    for _ in range(settings.PASSWORD_RESETS_PER_ACCOUNT):
        client.post("/password-reset/", {"email": user.email})
    held = client.post("/password-reset/", {"email": user.email})
    unknown = client.post("/password-reset/", {"email": "nobody-here@example.com"})
    assert (held.status_code, held["Location"]) == (unknown.status_code, unknown["Location"])


def test_invitation_mail_to_one_address_is_capped(client, user, settings):
    client.force_login(user)
    member_client = client
    for _ in range(settings.INVITATIONS_PER_ADDRESS):
        sent = member_client.post(
            "/organization/members/", {"email": "target@example.com", "role": "member"}
        )
        assert sent.status_code == 302
    refused = member_client.post(
        "/organization/members/", {"email": "target@example.com", "role": "member"}
    )
    assert refused.status_code == 400
    assert "Too many invitations" in refused.content.decode()
    assert len(mail.outbox) == settings.INVITATIONS_PER_ADDRESS
