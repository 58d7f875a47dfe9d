import re

from django.core import mail

from accounts.models import Membership, User


def test_signing_up_creates_a_personal_organization_and_logs_in(client, db):
    response = client.post(
        "/signup/", {"name": "Ada", "email": "Ada@Example.com", "password": "a long passphrase 42"}
    )
    assert response.status_code == 302
    user = User.objects.get(email="ada@example.com")
    assert user.name == "Ada"
    membership = Membership.objects.get(user=user)
    assert membership.role == "owner"
    assert client.get("/servers/").status_code == 200


def test_sign_up_errors_are_shown_next_to_the_fields(client, user):
    response = client.post("/signup/", {"email": user.email, "password": "short"})
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "email" in errors and "password" in errors
    assert 'id="id_password_errors"' in response.content.decode()


def test_log_in_and_out(client, user):
    response = client.post(
        "/login/", {"username": "alice@example.com", "password": "correct horse battery staple"}
    )
    assert response.status_code == 302
    assert client.get("/servers/").status_code == 200
    assert client.post("/logout/").status_code == 302
    assert client.get("/servers/").status_code == 302


def test_an_email_typed_with_capitals_and_spaces_still_logs_in(client, user):
    response = client.post(
        "/login/",
        {"username": "  Alice@Example.COM ", "password": "correct horse battery staple"},
    )
    assert response.status_code == 302
    assert client.get("/servers/").status_code == 200


def test_the_password_stays_case_sensitive(client, user):
    response = client.post(
        "/login/", {"username": user.email, "password": "Correct Horse Battery Staple"}
    )
    assert response.status_code == 200
    assert "The password is case-sensitive." in response.content.decode()


def test_a_wrong_password_is_refused_without_saying_which_part_was_wrong(client, user):
    response = client.post("/login/", {"username": user.email, "password": "nope"})
    assert response.status_code == 200
    assert "correct email and password" in response.content.decode()


def test_password_reset_sends_a_working_link(client, user):
    client.post("/password-reset/", {"email": user.email})
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/reset/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200
    response = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a brand new passphrase", "new_password2": "a brand new passphrase"},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a brand new passphrase")


def test_password_reset_does_not_reveal_unknown_emails(client, db):
    response = client.post("/password-reset/", {"email": "nobody@example.com"})
    assert response.status_code == 302
    assert mail.outbox == []


def test_account_settings_update_the_profile_and_password(client, user):
    client.force_login(user)
    client.post(
        "/account/",
        {"save_profile": "1", "profile-name": "Alice A", "profile-email": "alice@example.com"},
    )
    user.refresh_from_db()
    assert user.name == "Alice A"
    response = client.post(
        "/account/",
        {
            "change_password": "1",
            "password-old_password": "correct horse battery staple",
            "password-new_password1": "an even better passphrase",
            "password-new_password2": "an even better passphrase",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("an even better passphrase")
    assert client.get("/account/").status_code == 200  # still logged in


def test_settings_refuse_an_email_taken_by_someone_else(client, user, outsider):
    client.force_login(user)
    response = client.post(
        "/account/", {"save_profile": "1", "profile-name": "", "profile-email": outsider.email}
    )
    assert "email" in response.context["profile_form"].errors


def test_every_form_carries_a_csrf_token(client, user):
    for url in ("/signup/", "/login/", "/password-reset/"):
        assert "csrfmiddlewaretoken" in client.get(url).content.decode()
    client.force_login(user)
    assert "csrfmiddlewaretoken" in client.get("/account/").content.decode()


def test_the_personal_organization_is_named_after_the_name_given_at_sign_up(client, db):
    client.post(
        "/signup/",
        {"name": "Ada Lovelace", "email": "ada@example.com", "password": "a long pass 42"},
    )
    membership = Membership.objects.get(user__email="ada@example.com")
    assert membership.organization.name == "Ada Lovelace's organization"


def test_without_a_name_the_personal_organization_is_named_after_the_email(client, db):
    client.post("/signup/", {"email": "bob@example.com", "password": "a long pass 42"})
    membership = Membership.objects.get(user__email="bob@example.com")
    assert membership.organization.name == "bob@example.com's organization"


def test_signing_up_with_a_taken_email_links_to_the_login_page(client, user):
    response = client.post("/signup/", {"email": user.email, "password": "a long pass 42"})
    assert '<a href="/login/">Log in instead.</a>' in response.content.decode()
