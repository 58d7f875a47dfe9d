import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from accounts.models import ApiKey, digest_key
from servers.models import Server

pytestmark = pytest.mark.django_db


def run(*args):
    out = io.StringIO()
    call_command("apikey", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="alpha", name="alpha")


def test_create_prints_the_raw_key_once_and_stores_only_its_digest(user, org):
    out = run("create", "--owner", user.email, "--name", "laptop")
    raw = out.strip().splitlines()[-1]
    key = ApiKey.objects.get(organization=org)
    assert raw.startswith(key.prefix) and key.digest == digest_key(raw)
    assert key.organization == org and key.created_by == user


def test_create_with_json_scoped_to_a_server_and_expiring(user, server):
    payload = json.loads(
        run(
            "create",
            "--owner",
            user.email,
            "--name",
            "ci",
            "--server",
            "alpha",
            "--expires-days",
            "7",
            "--json",
        )
    )
    key = ApiKey.objects.get(pk=payload["id"])
    assert set(payload) == {"id", "name", "prefix", "key", "servers", "expires_at"}
    assert payload["servers"] == ["alpha"] and payload["name"] == "ci"
    assert digest_key(payload["key"]) == key.digest
    assert list(key.servers.all()) == [server]
    remaining = key.expires_at - timezone.now()
    assert timedelta(days=6, hours=23) < remaining <= timedelta(days=7)


def test_create_refuses_a_server_of_another_organization(outsider, server):
    with pytest.raises(CommandError, match="has no server 'alpha'"):
        run("create", "--owner", outsider.email, "--name", "x", "--server", "alpha")
    organizations = [outsider.personal_organization(), server.organization]
    assert not ApiKey.objects.filter(organization__in=organizations).exists()


def test_list_shows_state_and_never_the_key(user, org, outsider_org):
    active, raw = ApiKey.issue(org, "active one")
    revoked, _ = ApiKey.issue(org, "revoked one")
    revoked.revoke()
    ApiKey.issue(outsider_org, "not yours")
    out = run("list", "--owner", user.email)
    assert raw not in out and active.digest not in out
    assert "active one" in out and "revoked one" in out and "not yours" not in out
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert rows[active.prefix].endswith("active") and "never" in rows[active.prefix]
    assert rows[revoked.prefix].endswith("revoked")


def test_revoke_by_prefix(user, org):
    key, _ = ApiKey.issue(org, "old")
    out = run("revoke", key.prefix, "--owner", user.email)
    key.refresh_from_db()
    assert key.revoked_at is not None and "Revoked" in out


def test_an_outsider_cannot_revoke_anothers_key(outsider, org):
    key, _ = ApiKey.issue(org, "mine")
    with pytest.raises(CommandError, match="no key with prefix"):
        run("revoke", key.prefix, "--owner", outsider.email)
    key.refresh_from_db()
    assert key.revoked_at is None
