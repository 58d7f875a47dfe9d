"""The reported attack, end to end against a live server: an attacker whose organization is
older than the victim's invites the victim; the victim's next secret (API without an
organization, and the dashboard's default), key (`manage.py apikey create`) and imported server
(API without an organization) must land in the victim's own organization, and the attacker must
not be able to read any of it, whether or not the victim accepted the invitation."""

import re
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.management import call_command
from django.utils.crypto import get_random_string

from accounts.models import ApiKey, Invitation, Membership, User
from api.models import PersonalAccessToken
from servers.models import Server
from tests.conftest import LiveServer
from vault.models import Secret

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
LINK = re.compile(r"https?://[^/\s]+(/invitations/[^/\s]+/)")


@pytest.fixture(scope="module")
def mail_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mail")


@pytest.fixture(scope="module")
def live(live_database, mail_dir):
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(
        live_database,
        extra_env={
            "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "EMAIL_FILE_PATH": str(mail_dir),
        },
    )
    yield server
    server.stop()


class Browser:
    """A logged-in dashboard session over real HTTP, posting forms with their CSRF token."""

    def __init__(self, base: str, email: str, password: str):
        self.http = httpx2.Client(base_url=base, follow_redirects=False, timeout=30)
        page = self.http.get("/login/")
        response = self.http.post(
            "/login/",
            data={
                "username": email,
                "password": password,
                "csrfmiddlewaretoken": CSRF.search(page.text).group(1),
            },
        )
        assert response.status_code == 302, response.text

    def post_form(self, path: str, data: dict, form_page: str | None = None) -> httpx2.Response:
        page = self.http.get(form_page or path)
        token = CSRF.search(page.text).group(1)
        return self.http.post(path, data={**data, "csrfmiddlewaretoken": token})


def api_client(base: str, token: str) -> httpx2.Client:
    return httpx2.Client(base_url=base, headers={"Authorization": f"Token {token}"}, timeout=30)


def live_user(email: str, password: str) -> User:
    """A user whose password the live server can check: tests hash with MD5 for speed, a
    hasher the server process does not list."""
    user = User.objects.create_user(email)
    user.password = PBKDF2PasswordHasher().encode(password, get_random_string(12))
    user.save(update_fields=["password"])
    return user


@pytest.fixture
def people(committed, unique):
    def make():
        # The attacker's organization is the older one: the old rule ("personal organization
        # = oldest organization") then pointed the victim at it.
        attacker = live_user(f"attacker-{unique}@example.net", "attacker pass 1")
        victim = live_user(f"victim-{unique}@example.com", "victim pass 12")
        _, attacker_token = PersonalAccessToken.issue(attacker, "attack")
        _, victim_token = PersonalAccessToken.issue(victim, "mine")
        return SimpleNamespace(
            attacker=attacker,
            victim=victim,
            attacker_org=attacker.personal_org,
            victim_org=victim.personal_org,
            attacker_token=attacker_token,
            victim_token=victim_token,
        )

    return committed(make)


def invitation_link(mail_dir: Path, email: str) -> str:
    for message in sorted(mail_dir.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True):
        text = message.read_text()
        if f"To: {email}" in text:
            return LINK.search(text).group(1)
    raise AssertionError(f"no invitation mail to {email}")


@pytest.mark.parametrize("victim_accepts", [False, True], ids=["pending", "accepted"])
def test_an_invitation_never_redirects_the_victims_new_data_into_the_attackers_organization(
    live, mail_dir, people, committed, unique, victim_accepts
):
    p = people
    attacker = Browser(live.url, p.attacker.email, "attacker pass 1")
    sent = attacker.post_form("/organization/members/", {"email": p.victim.email, "role": "member"})
    assert sent.status_code == 302
    link = invitation_link(mail_dir, p.victim.email)
    # Invitation alone: no membership.
    assert not committed(
        Membership.objects.filter(organization=p.attacker_org, user=p.victim).exists
    )

    victim = Browser(live.url, p.victim.email, "victim pass 12")
    if victim_accepts:
        answered = victim.post_form(link, {"answer": "accept"})
        assert answered.status_code == 302
        assert committed(
            Membership.objects.filter(organization=p.attacker_org, user=p.victim).exists
        )

    victim_api = api_client(live.url, p.victim_token)
    # 1. A secret through the API, no organization named.
    created = victim_api.post("/api/secrets/", json={"name": f"API_{unique}", "value": "s3cret-1"})
    assert created.status_code == 201, created.text
    assert created.json()["organization"] == p.victim_org.slug
    # 2. A secret through the dashboard's current organization, in the same session that
    # answered the invitation (accepting does not switch it), and again after a fresh login.
    saved = victim.post_form("/secrets/", {"name": f"DASH_{unique}", "value": "s3cret-2"})
    assert saved.status_code == 302, saved.text
    fresh = Browser(live.url, p.victim.email, "victim pass 12")
    saved = fresh.post_form("/secrets/", {"name": f"FRESH_{unique}", "value": "s3cret-3"})
    assert saved.status_code == 302, saved.text
    # 3. A server imported through the API, no organization named.
    imported = victim_api.post(
        "/api/servers/import/", json={"slug": f"victim-{unique}", "name": "mine"}
    )
    assert imported.status_code == 201, imported.text
    assert imported.json()["organization"] == p.victim_org.slug
    # 4. A key from the command line, no --org.
    out = StringIO()
    committed(
        call_command,
        "apikey",
        "create",
        "--owner",
        p.victim.email,
        "--name",
        "cli",
        "--json",
        stdout=out,
    )

    def placed():
        return {
            "api secret": Secret.objects.get(name=f"API_{unique}").organization_id,
            "dashboard secret": Secret.objects.get(name=f"DASH_{unique}").organization_id,
            "fresh login secret": Secret.objects.get(name=f"FRESH_{unique}").organization_id,
            "server": Server.objects.get(slug=f"victim-{unique}").organization_id,
            "key": ApiKey.objects.get(created_by=p.victim, name="cli").organization_id,
        }

    assert committed(placed) == dict.fromkeys(
        ["api secret", "dashboard secret", "fresh login secret", "server", "key"], p.victim_org.pk
    )

    # The attacker sees none of it, on any surface.
    attacker_api = api_client(live.url, p.attacker_token)
    names = {s["name"] for s in attacker_api.get("/api/secrets/").json()["results"]}
    assert not names & {f"API_{unique}", f"DASH_{unique}", f"FRESH_{unique}"}
    assert attacker_api.get(f"/api/servers/victim-{unique}/").status_code == 404
    assert "cli" not in {k["name"] for k in attacker_api.get("/api/keys/").json()["results"]}
    assert attacker.http.get(f"/servers/victim-{unique}/").status_code == 404
    assert f"API_{unique}" not in attacker.http.get("/secrets/").text


def test_an_invitation_to_an_address_without_an_account_creates_none(
    live, mail_dir, people, committed, unique
):
    attacker = Browser(live.url, people.attacker.email, "attacker pass 1")
    email = f"nobody-{unique}@example.org"
    assert (
        attacker.post_form("/organization/members/", {"email": email, "role": "admin"}).status_code
        == 302
    )
    assert invitation_link(mail_dir, email)
    assert not committed(User.objects.filter(email=email).exists)
    assert committed(lambda: Invitation.objects.get(email=email).state) == "pending"
