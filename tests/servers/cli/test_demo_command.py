import io
import re

import pytest
from django.core.management import call_command

from accounts.models import ApiKey, User, digest_key
from servers.models import Server

pytestmark = pytest.mark.django_db


def run(**options):
    out = io.StringIO()
    call_command("demo", stdout=out, **options)
    return out.getvalue()


def test_demo_sets_up_a_user_both_servers_and_a_working_key(monkeypatch, settings):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    settings.SITE_URL = "http://localhost:9000"
    out = run()
    user = User.objects.get(email="demo@getmcp.local")
    password = re.search(r"Password \(generated, shown once\): (\S+)", out).group(1)
    assert user.check_password(password)
    org = user.personal_organization()
    assert set(Server.objects.filter(organization=org).values_list("slug", flat=True)) == {
        "demo",
        "conformance",
    }
    raw = re.search(r"API key for 'demo' \(shown once\): (\S+)", out).group(1)
    key = ApiKey.objects.get(digest=digest_key(raw))
    assert [s.slug for s in key.servers.all()] == ["demo"]
    assert "curl -sS http://localhost:9000/mcp/demo" in out
    assert f"Authorization: Bearer {raw}" in out
    assert "claude mcp add --transport http getmcp-demo http://localhost:9000/mcp/demo" in out


def test_demo_runs_again_without_changing_the_password_and_issues_a_fresh_key(monkeypatch):
    monkeypatch.setenv("DEMO_PW", "a fine demo passphrase")
    run(password_env="DEMO_PW")
    monkeypatch.delenv("DEMO_PW")
    out = run(password_env="DEMO_PW")
    assert "already exists" in out and "Password" not in out
    demo = User.objects.get(email="demo@getmcp.local")
    assert demo.check_password("a fine demo passphrase")
    assert Server.objects.filter(organization__memberships__user=demo).count() == 2
    assert ApiKey.objects.filter(organization__memberships__user=demo).count() == 2


def test_running_it_again_keeps_edits_made_to_the_demo_servers(monkeypatch):
    monkeypatch.setenv("GETMCP_PASSWORD", "a fine demo passphrase")
    run()
    Server.objects.filter(slug="demo").update(name="Edited in the dashboard")
    out = run()
    assert Server.objects.get(slug="demo").name == "Edited in the dashboard"
    assert "'demo' already existed and was kept as it is" in out
    assert "server import examples/demo.yaml --owner demo@getmcp.local --replace" in out
