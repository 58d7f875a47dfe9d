import pytest
from asgiref.sync import async_to_sync

from mcp_protocol.context import NullContext
from mcp_protocol.errors import McpError
from servers.methods import resources_read
from servers.models import Server
from servers.snapshot import compile_definition
from tests.servers.upstream.fixtures import guarded_upstream, upstream  # noqa: F401


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="fetching", name="fetching")


def snapshot_of(server, *resources):
    """The snapshot of a server whose definition has these resources."""
    definition = {"slug": server.slug, "name": server.name, "resources": list(resources)}
    return compile_definition(
        definition,
        server_id=server.pk,
        organization_id=server.organization_id,
        generation="1",
    )


def read(snapshot, uri, ctx=None):
    return async_to_sync(resources_read)(snapshot, {"uri": uri}, ctx or NullContext())


def read_fails(snapshot, uri, ctx=None) -> McpError:
    try:
        read(snapshot, uri, ctx)
    except McpError as exc:
        return exc
    raise AssertionError("the read did not fail")
