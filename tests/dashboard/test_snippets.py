import json

import pytest
from django.test import override_settings

from dashboard.snippets import KEY_PLACEHOLDER, client_setups, endpoint_url


@override_settings(SITE_URL="https://mcp.example.com/")
def test_the_endpoint_url_is_the_site_url_plus_the_slug(server):
    assert endpoint_url(server) == "https://mcp.example.com/mcp/weather"


@override_settings(SITE_URL="https://mcp.example.com")
def test_every_client_gets_a_setup_with_the_real_url_and_key(server):
    setups = {s["id"]: s for s in client_setups(server, "gmcp_secret")}
    assert set(setups) == {
        "claude-code",
        "claude-desktop",
        "cursor",
        "vscode",
        "windsurf",
        "python",
        "curl",
    }
    assert setups["claude-code"]["code"] == (
        "claude mcp add --transport http weather https://mcp.example.com/mcp/weather "
        '--header "Authorization: Bearer gmcp_secret"'
    )
    cursor = json.loads(setups["cursor"]["code"])
    assert cursor["mcpServers"]["weather"] == {
        "url": "https://mcp.example.com/mcp/weather",
        "headers": {"Authorization": "Bearer gmcp_secret"},
    }
    assert json.loads(setups["vscode"]["code"])["servers"]["weather"]["type"] == "http"
    assert "serverUrl" in json.loads(setups["windsurf"]["code"])["mcpServers"]["weather"]
    for setup in setups.values():
        assert "gmcp_secret" in setup["code"]


def test_without_a_key_the_snippets_carry_a_placeholder(server):
    for setup in client_setups(server):
        assert KEY_PLACEHOLDER in setup["code"]


def test_a_server_without_auth_gets_no_header(server):
    server.auth_mode = "none"
    for setup in client_setups(server):
        assert "Authorization" not in setup["code"]


@pytest.mark.parametrize("setup_id", ["python"])
def test_the_python_snippet_is_valid_python(server, setup_id):
    code = next(s["code"] for s in client_setups(server, "k") if s["id"] == setup_id)
    compile(code, "snippet.py", "exec")
