"""Upstream prompts through the snapshot and prompts/get, against the real upstream MCP server of
tests/servers/upstream (the official SDK, in a subprocess on loopback)."""

import pytest

from servers.prompts import upstream as upstream_prompts
from servers.snapshot import DefinitionError
from servers.upstream import health
from tests.servers.upstream.fixtures import TOKEN, free_port
from vault.models import Secret

from .conftest import get, get_fails, snapshot_of

pytestmark = pytest.mark.django_db

WHO = [{"name": "who", "description": "Whom to greet.", "required": True}]


def prompt(url, ours="greet", arguments=WHO, **config):
    return {
        "name": ours,
        "description": "Greet someone.",
        "arguments": arguments,
        "kind": "upstream",
        "config": {"url": url, **config},
    }


def test_a_prompt_of_the_upstream_is_got_through_ours(upstream, server, loopback_allowed):
    snapshot = snapshot_of(server, prompt(upstream.url))
    assert snapshot.prompt_list == (
        {"name": "greet", "description": "Greet someone.", "arguments": WHO},
    )
    assert get(snapshot, "greet", {"who": "Ada"}) == {
        "description": "Greet someone.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please greet Ada warmly."}}
        ],
    }
    assert health.health(server.pk, upstream.url)["status"] == "ok"


def test_the_upstreams_name_for_it_is_used_under_ours(upstream, server, loopback_allowed):
    snapshot = snapshot_of(server, prompt(upstream.url, ours="welcome-someone", prompt="greet"))
    assert [p["name"] for p in snapshot.prompt_list] == ["welcome-someone"]
    result = get(snapshot, "welcome-someone", {"who": "Grace"})
    assert result["messages"][0]["content"]["text"] == "Please greet Grace warmly."


def test_without_a_description_of_ours_the_upstreams_is_given(upstream, server, loopback_allowed):
    definition = prompt(upstream.url)
    del definition["description"]
    result = get(snapshot_of(server, definition), "greet", {"who": "Ada"})
    assert result["description"] == "Greet someone by name."


def test_our_required_arguments_are_checked_before_the_upstream_is_asked(server, loopback_allowed):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    error = get_fails(snapshot_of(server, prompt(url)), "greet", {})
    assert error.code == -32602 and error.data == {"missing": ["who"]}
    assert health.health(server.pk, url)["status"] != "unreachable"


def test_arguments_the_upstream_refuses_are_an_error_with_its_reason(
    upstream, server, loopback_allowed
):
    snapshot = snapshot_of(server, prompt(upstream.url, arguments=[]))
    error = get_fails(snapshot, "greet", {})
    assert error.code == -32603
    assert error.message.startswith("Prompt greet could not be got: upstream MCP server")
    assert "Missing required arguments" in error.message
    assert error.data == {"name": "greet"}


def test_credentials_come_from_the_vault_and_are_never_shown(
    guarded_upstream, org, server, loopback_allowed
):
    headers = {"Authorization": "Bearer {{ secrets.NOTES_TOKEN }}"}
    snapshot = snapshot_of(server, prompt(guarded_upstream.url, headers=headers))
    missing = get_fails(snapshot, "greet", {"who": "Ada"})
    assert missing.code == -32603 and "NOTES_TOKEN" in missing.message

    Secret.store(org, "NOTES_TOKEN", "wrong-token-value")
    refused = get_fails(snapshot, "greet", {"who": "Ada"})
    assert refused.code == -32603 and "unreachable" in refused.message
    assert "wrong-token-value" not in refused.message

    Secret.store(org, "NOTES_TOKEN", TOKEN)
    result = get(snapshot, "greet", {"who": "Ada"})
    assert result["messages"][0]["content"]["text"] == "Please greet Ada warmly."


def test_a_prompt_the_upstream_does_not_have_is_an_error(upstream, server, loopback_allowed):
    snapshot = snapshot_of(server, prompt(upstream.url, prompt="nope"))
    error = get_fails(snapshot, "greet", {"who": "Ada"})
    assert error.code == -32603
    assert "upstream MCP server" in error.message and error.data == {"name": "greet"}


def test_an_unreachable_upstream_is_an_error_and_unhealthy(server, loopback_allowed):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    error = get_fails(snapshot_of(server, prompt(url, timeoutSeconds=5)), "greet", {"who": "A"})
    assert error.code == -32603
    assert "127.0.0.1" in error.message and "unreachable" in error.message
    assert health.health(server.pk, url)["status"] == "unreachable"


def test_loopback_is_refused_without_the_allow_list(upstream, server, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    error = get_fails(snapshot_of(server, prompt(upstream.url)), "greet", {"who": "Ada"})
    assert error.code == -32603
    assert "are not allowed: it is a loopback address." in error.message


def test_a_bad_config_is_refused_naming_the_field(server):
    with pytest.raises(DefinitionError, match=r"prompts\[0\]\.config\.transport"):
        snapshot_of(server, prompt("https://mcp.example.com/mcp", transport="carrier-pigeon"))
    with pytest.raises(DefinitionError, match=r"prompts\[0\]\.kind: Unknown prompt kind 'magic'"):
        snapshot_of(server, {**prompt("https://mcp.example.com/mcp"), "kind": "magic"})


def test_config_validation_names_each_field():
    assert upstream_prompts.validate_config({"url": "ftp://x", "prompt": "", "extra": 1}) == [
        "config.extra: unknown field",
        "config.url: required, the upstream's http(s) MCP endpoint",
        "config.prompt: must be the upstream's name for the prompt",
    ]
