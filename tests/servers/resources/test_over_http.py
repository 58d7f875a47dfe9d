"""resources/read of fetched resources at /mcp/<slug>, served by a real uvicorn process: the
content on success, and a JSON-RPC -32603 error echoing the request id when the URL cannot be
fetched (unreachable, or refused by the SSRF guard when the allow-list is closed)."""

import pytest
from pytest_httpserver import HTTPServer

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.servers.upstream.fixtures import free_port


@pytest.fixture(scope="module")
def open_server(live_database):
    """A server process whose deployment allow-list admits loopback."""
    server = LiveServer(live_database, extra_env={"OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8"})
    yield server
    server.stop()


@pytest.fixture(scope="module")
def origin():
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    server.expect_request("/readme").respond_with_data("# Hello", content_type="text/markdown")
    yield server
    server.stop()


def setup_server(committed, unique, origin) -> tuple[str, str]:
    def make():
        user = User.objects.create_user(f"fetch-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        definition = {
            "slug": f"fetch-{unique}",
            "name": "fetching",
            "resources": [
                {
                    "uri": "docs://readme",
                    "name": "readme",
                    "kind": "fetched",
                    "config": {"url": origin.url_for("/readme")},
                },
                {
                    "uri": "docs://down",
                    "name": "down",
                    "kind": "fetched",
                    "config": {"url": f"http://127.0.0.1:{free_port()}/gone"},
                },
            ],
        }
        server = import_definition(definition, org)
        _, raw = ApiKey.issue(org, "k")
        return server.slug, raw

    return committed(make)


def test_a_fetched_resource_is_read_over_the_endpoint(open_server, committed, unique, origin):
    slug, raw = setup_server(committed, unique, origin)
    client = RawMcp(open_server.mcp_url(slug), key=raw)
    client.initialize()
    listed = client.call("resources/list")["result"]["resources"]
    assert [r["uri"] for r in listed] == ["docs://readme", "docs://down"]
    read = client.call("resources/read", {"uri": "docs://readme"})["result"]
    assert read == {
        "contents": [{"uri": "docs://readme", "mimeType": "text/markdown", "text": "# Hello"}]
    }
    down = client.call("resources/read", {"uri": "docs://down"})
    assert down["error"]["code"] == -32603
    assert down["error"]["message"] == (
        "Resource docs://down could not be fetched: The upstream API could not be reached: "
        "The request failed: could not connect to the server."
    )
    assert down["error"]["data"] == {"uri": "docs://down"}
    assert "id" in down and down["id"] is not None


def test_without_the_allow_list_loopback_is_refused(asgi_server, committed, unique, origin):
    slug, raw = setup_server(committed, unique, origin)
    client = RawMcp(asgi_server.mcp_url(slug), key=raw)
    client.initialize()
    before = len(origin.log)
    refused = client.call("resources/read", {"uri": "docs://readme"})
    assert refused["error"]["code"] == -32603
    assert "loopback address" in refused["error"]["message"]
    assert len(origin.log) == before
