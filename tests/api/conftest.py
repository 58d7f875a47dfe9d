import pytest
from rest_framework.test import APIClient

from accounts.models import ApiKey
from api.models import PersonalAccessToken
from servers.models import Prompt, Resource, ResourceTemplate, Server, Tool


def client_for(user) -> APIClient:
    _, raw = PersonalAccessToken.issue(user, "tests")
    client = APIClient()
    client.default_format = "json"
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    client.raw_token = raw
    return client


@pytest.fixture
def api(user):
    """Alice, authenticated with a personal access token."""
    return client_for(user)


@pytest.fixture
def outsider_api(outsider):
    """Mallory, a member of another organization only."""
    return client_for(outsider)


@pytest.fixture
def anonymous():
    return APIClient()


ECHO = {
    "name": "echo",
    "description": "Echo a message back.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
    "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
}


@pytest.fixture
def server(org):
    server = Server.objects.create(organization=org, slug="weather", name="weather")
    Tool.objects.create(
        server=server,
        name=ECHO["name"],
        description=ECHO["description"],
        input_schema=ECHO["inputSchema"],
        config=ECHO["config"],
    )
    Resource.objects.create(server=server, uri="test://readme", name="readme", text="hello")
    ResourceTemplate.objects.create(
        server=server, uri_template="test://items/{id}", name="item", text="item {{ id }}"
    )
    Prompt.objects.create(
        server=server,
        name="greet",
        description="Greet someone.",
        arguments=[{"name": "who", "required": True}],
        messages=[{"role": "user", "content": {"type": "text", "text": "Hello {{ who }}"}}],
    )
    return server


@pytest.fixture
def outsider_server(outsider_org):
    server = Server.objects.create(organization=outsider_org, slug="secret-plans", name="plans")
    Tool.objects.create(
        server=server, name="plot", description="Plot.", input_schema={"type": "object"}
    )
    return server


@pytest.fixture
def outsider_key(outsider_org):
    key, _ = ApiKey.issue(outsider_org, "theirs")
    return key
