import pytest
from asgiref.sync import async_to_sync

from mcp_protocol.context import NullContext
from mcp_protocol.errors import McpError
from servers.methods import prompts_get
from servers.models import Server
from servers.snapshot import compile_definition
from tests.servers.upstream.fixtures import guarded_upstream, upstream  # noqa: F401


@pytest.fixture
def loopback_allowed(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="prompting", name="prompting")


def snapshot_of(server, *prompts):
    """The snapshot of a server whose definition has these prompts."""
    definition = {"slug": server.slug, "name": server.name, "prompts": list(prompts)}
    return compile_definition(
        definition, server_id=server.pk, organization_id=server.organization_id, generation="1"
    )


def get(snapshot, name, arguments=None, ctx=None):
    params = {"name": name, "arguments": arguments or {}}
    return async_to_sync(prompts_get)(snapshot, params, ctx or NullContext())


def get_fails(snapshot, name, arguments=None, ctx=None) -> McpError:
    try:
        get(snapshot, name, arguments, ctx)
    except McpError as exc:
        return exc
    raise AssertionError("prompts/get did not fail")
