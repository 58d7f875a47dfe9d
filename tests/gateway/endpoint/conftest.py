from types import SimpleNamespace

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.gateway.endpoint.mcp_http import RawMcp


def workflow_tool(name: str, description: str, steps: list[dict]) -> dict:
    """A tool without arguments that runs `steps` (servers/kinds/workflow), for the tests that
    add one to server_definition's tools."""
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        "kind": "workflow",
        "config": {"steps": steps},
    }


def server_definition(slug: str, **overrides) -> dict:
    definition = {
        "slug": slug,
        "name": f"srv-{slug}",
        "version": "1.0.0",
        "auth": "api_key",
        "status": "active",
        "tools": [
            {
                "name": "echo",
                "description": "Echo a message back.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"],
                },
                "kind": "static",
                "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
            },
            {
                "name": "slow_steps",
                "description": "Reports progress and logs while it works.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"log": {"level": "info", "message": "starting"}},
                        {"progress": {"progress": 1, "total": 2}},
                        {"sleep": {"ms": 20}},
                        {"progress": {"progress": 2, "total": 2}},
                        {"log": {"level": "debug", "message": "details"}},
                        {"return": {"content": [{"type": "text", "text": "done"}]}},
                    ]
                },
            },
            {
                "name": "ask_name",
                "description": "Asks the user for their name.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {
                            "elicit": {
                                "message": "What is your name?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"name": {"type": "string"}},
                                    "required": ["name"],
                                },
                                "into": "answer",
                            }
                        },
                        {
                            "return": {
                                "content": [
                                    {"type": "text", "text": "Hello {{ answer.content.name }}"}
                                ]
                            }
                        },
                    ]
                },
            },
            {
                "name": "ask_model",
                "description": "Asks the client's model a question.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"question": {"type": "string"}},
                    "required": ["question"],
                },
                "kind": "workflow",
                "config": {
                    "steps": [
                        {
                            "sample": {
                                "messages": [
                                    {
                                        "role": "user",
                                        "content": {"type": "text", "text": "{{ question }}"},
                                    }
                                ],
                                "maxTokens": 50,
                                "into": "reply",
                            }
                        },
                        {
                            "return": {
                                "content": [
                                    {"type": "text", "text": "Model said: {{ reply.content.text }}"}
                                ]
                            }
                        },
                    ]
                },
            },
            {
                "name": "long_wait",
                "description": "Sleeps for a long time unless cancelled.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"sleep": {"ms": 20000}},
                        {"return": {"content": [{"type": "text", "text": "woke up"}]}},
                    ]
                },
            },
            {
                "name": "takes_a_break",
                "description": "Lets the connection go, then finishes in the background.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"reconnect": {"retryMs": 200}},
                        {"sleep": {"ms": 300}},
                        {"return": {"content": [{"type": "text", "text": "finished"}]}},
                    ]
                },
            },
            {
                "name": "always_fails",
                "description": "Fails on purpose.",
                "inputSchema": {"type": "object", "properties": {}},
                "kind": "static",
                "config": {"content": [{"type": "text", "text": "It broke"}], "isError": True},
            },
        ],
        "resources": [
            {
                "uri": "note://readme",
                "name": "readme",
                "mimeType": "text/plain",
                "text": "Read me first.",
            }
        ],
        "resourceTemplates": [
            {
                "uriTemplate": "note://items/{id}",
                "name": "item",
                "mimeType": "text/plain",
                "text": "Item {{ id }}",
            }
        ],
        "prompts": [
            {
                "name": "greet",
                "description": "Greets someone.",
                "arguments": [{"name": "who", "required": True}],
                "messages": [{"role": "user", "content": {"type": "text", "text": "Hi {{ who }}"}}],
            }
        ],
    }
    definition.update(overrides)
    return definition


@pytest.fixture
def tenant(committed, unique):
    """A user, their organization, a server of theirs and a key for it, all committed."""

    def make():
        user = User.objects.create_user(f"owner-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        server = import_definition(server_definition(f"t-{unique}"), org)
        key, raw = ApiKey.issue(org, "test key")
        return SimpleNamespace(
            user=user, org=org, server=server, slug=server.slug, key=key, raw=raw
        )

    return committed(make)


@pytest.fixture
def outsider_tenant(committed, unique):
    def make():
        user = User.objects.create_user(f"outsider-{unique}@example.net", "long enough password 2")
        org = user.personal_organization()
        key, raw = ApiKey.issue(org, "outsider key")
        return SimpleNamespace(user=user, org=org, key=key, raw=raw)

    return committed(make)


@pytest.fixture
def client(asgi_server, tenant):
    return RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
