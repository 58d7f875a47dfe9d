"""A secret used as a URL host comes back lower-cased in error texts: it is masked anyway."""

from vault.models import Secret

from .conftest import tool_text

HOST = "Secret-Internal-Billing.INVALID"


def test_a_secret_host_never_shows_in_the_error_of_an_http_tool(committed, attacker):
    tenant = attacker(
        tools=[
            {
                "name": "fetch",
                "description": "calls a host named by a secret",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "http",
                "config": {"url": "https://{{ secrets.HOST }}/v1/x"},
            }
        ]
    )

    def add_secret():
        secret = Secret(organization=tenant.org, name="HOST")
        secret.set_value(HOST)
        secret.save()

    committed(add_secret)
    reply = tenant.client.call("tools/call", {"name": "fetch", "arguments": {}})
    text = tool_text(reply)
    assert reply["result"]["isError"] is True
    assert "***" in text, text
    assert HOST.lower() not in text.lower(), text
