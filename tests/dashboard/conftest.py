import pytest

from servers.models import Server, Tool


@pytest.fixture
def member_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="weather", name="Weather")


@pytest.fixture
def tool(server):
    return Tool.objects.create(
        server=server,
        name="echo",
        description="Echo a message back.",
        input_schema={"type": "object", "properties": {"message": {"type": "string"}}},
        config={"content": [{"type": "text", "text": "{{ message }}"}]},
    )


@pytest.fixture
def outsider_server(outsider_org):
    return Server.objects.create(organization=outsider_org, slug="secret-plans", name="Secret")
