import json

import pytest
from django.core.management import CommandError, call_command

from api.models import PersonalAccessToken


def run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("token", *args, stdout=out)
    return out.getvalue()


def test_the_command_creates_a_token_that_authenticates(user, client):
    payload = json.loads(run("create", "--owner", user.email, "--name", "ci", "--json"))
    assert payload["token"].startswith("gpat_")
    assert PersonalAccessToken.find_active(payload["token"]).user == user
    response = client.get("/api/servers/", HTTP_AUTHORIZATION=f"Token {payload['token']}")
    assert response.status_code == 200


def test_the_command_lists_and_revokes_by_prefix(user):
    token, _ = PersonalAccessToken.issue(user, "old")
    assert "old" in run("list", "--owner", user.email)
    assert "Revoked" in run("revoke", token.prefix, "--owner", user.email)
    token.refresh_from_db()
    assert not token.is_active
    assert "revoked" in run("list", "--owner", user.email)


def test_the_command_refuses_unknown_owners_and_empty_names(user):
    with pytest.raises(CommandError, match="--owner"):
        run("create", "--owner", "nobody@example.com", "--name", "x")
    with pytest.raises(CommandError, match="--name"):
        run("create", "--owner", user.email, "--name", " ")


def test_the_command_cannot_revoke_someone_elses_token(user, outsider):
    token, _ = PersonalAccessToken.issue(outsider, "theirs")
    with pytest.raises(CommandError, match="no token"):
        run("revoke", token.prefix, "--owner", user.email)
