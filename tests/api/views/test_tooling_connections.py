"""An OpenAPI document whose operations need an `oauth2` authorization-code scheme proposes a
connection provider; its tools act as the calling person through it."""

from accounts.models import Membership, User
from connections.models import Provider
from servers.models import Tool

from ..conftest import client_for

# Shaped like a real issue tracker's description: a global requirement, an operation that
# asks for more, one public operation, and the scopes documented on the flow.
TRACKER = {
    "openapi": "3.0.3",
    "info": {"title": "Tracker", "version": "2.1"},
    "servers": [{"url": "https://api.tracker.example.com/v2"}],
    "components": {
        "securitySchemes": {
            "tracker_oauth": {
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://tracker.example.com/oauth/authorize",
                        "tokenUrl": "https://tracker.example.com/oauth/token",
                        "scopes": {
                            "issues:read": "Read issues",
                            "issues:write": "Open and close issues",
                        },
                    }
                },
            }
        }
    },
    "security": [{"tracker_oauth": ["issues:read"]}],
    "paths": {
        "/issues": {
            "get": {"operationId": "listIssues", "responses": {"200": {"description": "ok"}}},
            "post": {
                "operationId": "openIssue",
                "security": [{"tracker_oauth": ["issues:read", "issues:write"]}],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"title": {"type": "string"}},
                                "required": ["title"],
                            }
                        }
                    }
                },
                "responses": {"201": {"description": "created"}},
            },
        },
        "/status": {
            "get": {
                "operationId": "status",
                "security": [],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}
PREVIEW = "/api/servers/weather/tools/import-api/preview/"
COMMIT = "/api/servers/weather/tools/import-api/commit/"


def _configs(tools) -> dict:
    return {t.name: t.config for t in Tool.objects.filter(pk__in=[t["id"] for t in tools])}


def test_the_preview_proposes_the_provider_and_each_tool_names_its_scopes(api, server):
    response = api.post(PREVIEW, {"document": TRACKER})
    assert response.status_code == 200, response.json()
    preview = response.json()
    [provider] = preview["providers"]
    assert provider["key"] == "tracker"
    assert provider["authorizationUrl"] == "https://tracker.example.com/oauth/authorize"
    assert provider["tokenUrl"] == "https://tracker.example.com/oauth/token"
    assert sorted(provider["scopes"]) == ["issues:read", "issues:write"]
    assert (provider["exists"], provider["canCreate"]) == (False, True)
    ops = {op["name"]: op for op in preview["operations"]}
    assert ops["listIssues"]["config"]["connection"] == {
        "provider": "tracker",
        "scopes": ["issues:read"],
    }
    assert ops["openIssue"]["config"]["connection"]["scopes"] == ["issues:read", "issues:write"]
    assert "connection" not in ops["status"]["config"]
    # No secret is asked for: the person's own token is the credential.
    assert preview["secrets"] == []
    assert all(not op["problems"] for op in preview["operations"])


def test_an_admin_s_commit_creates_the_provider_and_marks_the_tools(api, server):
    preview = api.post(PREVIEW, {"document": TRACKER}).json()
    response = api.post(
        COMMIT,
        {
            "preview": preview,
            "providers": {"tracker": {"clientId": "getmcp-app", "clientSecret": "s3"}},
        },
    )
    assert response.status_code == 201, response.json()
    assert "X-Import-Notes" not in response
    provider = Provider.objects.get(organization=server.organization, key="tracker")
    assert provider.token_url == "https://tracker.example.com/oauth/token"
    assert provider.client_id == "getmcp-app"
    assert provider.client_secret_ciphertext and "s3" not in str(provider.client_secret_ciphertext)
    configs = _configs(response.json())
    assert configs["openIssue"]["connection"] == {
        "provider": "tracker",
        "scopes": ["issues:read", "issues:write"],
    }
    # The same import again finds the provider and leaves it alone.
    again = api.post(PREVIEW, {"document": TRACKER}).json()
    assert again["providers"][0]["exists"] is True


def test_a_member_gets_the_tools_and_a_note_that_an_admin_must_add_the_provider(org, server):
    bob = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=bob, role=Membership.MEMBER)
    member = client_for(bob)
    preview = member.post(PREVIEW, {"document": TRACKER}).json()
    [provider] = preview["providers"]
    assert provider["canCreate"] is False and "only an admin" in provider["note"]

    response = member.post(
        COMMIT, {"preview": preview, "providers": {"tracker": {"clientId": "sneaky"}}}
    )
    assert response.status_code == 201, response.json()
    assert "only an admin can add" in response["X-Import-Notes"]
    assert not Provider.objects.filter(organization=org, key="tracker").exists()
    assert _configs(response.json())["listIssues"]["connection"]["provider"] == "tracker"
