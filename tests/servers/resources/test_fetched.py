"""Fetched resources through the snapshot and resources/read, against pytest-httpserver on
loopback (the allow-list opened by `loopback_allowed`, and closed where a test says so)."""

import base64
import json

import pytest
from werkzeug import Response

from servers.resources import fetched
from vault.models import Secret

from .conftest import read, read_fails, snapshot_of

pytestmark = pytest.mark.django_db


def resource(url, uri="docs://page", **extra):
    config = {"url": url, **extra.pop("config", {})}
    return {"uri": uri, "name": "page", "kind": "fetched", "config": config, **extra}


def test_the_content_is_fetched_on_every_read(httpserver, server, loopback_allowed):
    httpserver.expect_request("/page").respond_with_data("first", content_type="text/plain")
    snapshot = snapshot_of(server, resource(httpserver.url_for("/page")))
    assert read(snapshot, "docs://page") == {
        "contents": [{"uri": "docs://page", "mimeType": "text/plain", "text": "first"}]
    }
    httpserver.clear()
    httpserver.expect_request("/page").respond_with_data("second", content_type="text/plain")
    assert read(snapshot, "docs://page")["contents"][0]["text"] == "second"


def test_the_listing_shows_the_resource_without_fetching_it(httpserver, server, loopback_allowed):
    snapshot = snapshot_of(
        server, resource(httpserver.url_for("/page"), title="Page", mimeType="text/markdown")
    )
    assert list(snapshot.resource_list) == [
        {"uri": "docs://page", "name": "page", "title": "Page", "mimeType": "text/markdown"}
    ]
    assert httpserver.log == []


def test_a_mime_type_in_the_definition_wins_over_the_responses(
    httpserver, server, loopback_allowed
):
    httpserver.expect_request("/md").respond_with_data("# Hi", content_type="text/plain")
    snapshot = snapshot_of(server, resource(httpserver.url_for("/md"), mimeType="text/markdown"))
    assert read(snapshot, "docs://page")["contents"][0] == {
        "uri": "docs://page",
        "mimeType": "text/markdown",
        "text": "# Hi",
    }


def test_json_is_text_and_binary_is_a_blob(httpserver, server, loopback_allowed):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
    httpserver.expect_request("/data").respond_with_json({"a": 1})
    httpserver.expect_request("/logo").respond_with_data(png, content_type="image/png")
    snapshot = snapshot_of(
        server,
        resource(httpserver.url_for("/data"), uri="docs://data"),
        resource(httpserver.url_for("/logo"), uri="docs://logo"),
    )
    data = read(snapshot, "docs://data")["contents"][0]
    assert data["mimeType"] == "application/json" and json.loads(data["text"]) == {"a": 1}
    logo = read(snapshot, "docs://logo")["contents"][0]
    assert logo == {
        "uri": "docs://logo",
        "mimeType": "image/png",
        "blob": base64.b64encode(png).decode(),
    }


def test_without_a_content_type_utf8_is_text_and_anything_else_a_blob(
    httpserver, server, loopback_allowed
):
    def bare(body):
        def handler(request):
            # werkzeug adds a default content type; drop it so the body has to speak for itself.
            response = Response(body)
            del response.headers["Content-Type"]
            return response

        return handler

    httpserver.expect_request("/plain").respond_with_handler(bare(b"caf\xc3\xa9"))
    httpserver.expect_request("/raw").respond_with_handler(bare(b"\xff\x00\xfe"))
    snapshot = snapshot_of(
        server,
        resource(httpserver.url_for("/plain"), uri="docs://plain"),
        resource(httpserver.url_for("/raw"), uri="docs://raw"),
    )
    assert read(snapshot, "docs://plain")["contents"][0] == {"uri": "docs://plain", "text": "café"}
    assert read(snapshot, "docs://raw")["contents"][0] == {
        "uri": "docs://raw",
        "blob": base64.b64encode(b"\xff\x00\xfe").decode(),
    }


def test_a_cached_resource_is_fetched_once_within_its_ttl(httpserver, server, loopback_allowed):
    httpserver.expect_request("/slow").respond_with_data("v1", content_type="text/plain")
    snapshot = snapshot_of(
        server, resource(httpserver.url_for("/slow"), config={"cacheTtlSeconds": 60})
    )
    assert read(snapshot, "docs://page")["contents"][0]["text"] == "v1"
    assert read(snapshot, "docs://page")["contents"][0]["text"] == "v1"
    assert len(httpserver.log) == 1


def test_secrets_are_sent_and_never_shown(httpserver, org, server, loopback_allowed):
    Secret.store(org, "DOCS_TOKEN", "tok-docs-8c1e")
    httpserver.expect_request("/private").respond_with_data(
        "denied for tok-docs-8c1e", status=403, content_type="text/plain"
    )
    httpserver.expect_request("/echo").respond_with_data(
        "your token is tok-docs-8c1e", content_type="text/plain"
    )
    auth = {"type": "bearer", "token": "{{ secrets.DOCS_TOKEN }}"}
    snapshot = snapshot_of(
        server,
        resource(httpserver.url_for("/private"), config={"auth": auth}),
        resource(
            httpserver.url_for("/echo"),
            uri="docs://echo",
            config={"headers": {"X-Docs-Key": "{{ secrets.DOCS_TOKEN }}"}},
        ),
    )
    error = read_fails(snapshot, "docs://page")
    assert error.code == -32603
    assert "403" in error.message and "tok-docs-8c1e" not in str(error.message)
    assert httpserver.log[0][0].headers["Authorization"] == "Bearer tok-docs-8c1e"
    echoed = read(snapshot, "docs://echo")["contents"][0]["text"]
    assert echoed == "your token is ***"
    assert httpserver.log[1][0].headers["X-Docs-Key"] == "tok-docs-8c1e"


def test_a_missing_secret_is_an_error_naming_it(httpserver, server, loopback_allowed):
    snapshot = snapshot_of(
        server,
        resource(
            httpserver.url_for("/x"),
            config={"headers": {"Authorization": "Bearer {{ secrets.NOPE }}"}},
        ),
    )
    error = read_fails(snapshot, "docs://page")
    assert error.code == -32603 and "NOPE" in error.message and "Secrets page" in error.message
    assert httpserver.log == []


def test_a_body_over_the_size_cap_is_an_error_not_half_a_document(
    httpserver, server, loopback_allowed
):
    httpserver.expect_request("/big").respond_with_data("x" * 5000, content_type="text/plain")
    snapshot = snapshot_of(server, resource(httpserver.url_for("/big"), config={"maxBytes": 1000}))
    error = read_fails(snapshot, "docs://page")
    assert error.code == -32603 and "limit of 1000 bytes" in error.message


def test_an_error_status_is_a_json_rpc_error(httpserver, server, loopback_allowed):
    httpserver.expect_request("/gone").respond_with_data("no", status=404)
    snapshot = snapshot_of(server, resource(httpserver.url_for("/gone")))
    error = read_fails(snapshot, "docs://page")
    assert error.code == -32603
    assert error.message == (
        "Resource docs://page could not be fetched: the URL answered 404 NOT FOUND (not a success)."
    )
    assert error.data == {"uri": "docs://page"}


def test_an_unreachable_url_is_a_json_rpc_error(server, loopback_allowed):
    from tests.servers.upstream.fixtures import free_port

    snapshot = snapshot_of(server, resource(f"http://127.0.0.1:{free_port()}/x"))
    error = read_fails(snapshot, "docs://page")
    assert error.code == -32603
    assert "could not connect" in error.message


def test_loopback_is_refused_without_the_allow_list(httpserver, server, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    httpserver.expect_request("/page").respond_with_data("secret internal page")
    snapshot = snapshot_of(server, resource(httpserver.url_for("/page")))
    error = read_fails(snapshot, "docs://page")
    assert error.message.startswith(
        "Resource docs://page could not be fetched: Requests to 127.0.0.1 are not allowed: it is "
        "a loopback address. Outbound requests may only reach public internet addresses. "
        "The operator of this getmcp deployment can allow it: add 127.0.0.0/8 to "
        "OUTBOUND_ALLOWED_NETWORKS"
    )
    assert httpserver.log == []


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "config.url: required, an http:// or https:// URL"),
        ({"url": "file:///etc/passwd"}, "config.url: required, an http:// or https:// URL"),
        ({"url": "https://x.test/{id}"}, "config.url: a fetched resource has no arguments"),
        ({"url": "https://x.test/", "method": "POST"}, "config.method: unknown field"),
        ({"url": "https://x.test/", "maxBytes": 0}, "config.maxBytes: "),
        ({"url": "https://x.test/", "auth": {"type": "magic"}}, "config.auth.type: must be one"),
        ({"url": "https://x.test/", "headers": {"A": "{{ oops"}}, "config.headers"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(config, message):
    problems = fetched.validate_config(config)
    assert any(problem.startswith(message) for problem in problems), problems


def test_a_good_config_is_valid():
    assert (
        fetched.validate_config(
            {
                "url": "https://docs.example.com/a.md",
                "headers": {"Accept": "text/markdown"},
                "query": {"ref": "main"},
                "auth": {"type": "basic", "username": "u", "password": "{{ secrets.P }}"},
                "maxBytes": 2048,
                "cacheTtlSeconds": 30,
                "timeoutSeconds": 5,
                "retries": 1,
                "retryBackoffMs": 10,
                "followRedirects": False,
            }
        )
        == []
    )


def test_a_snapshot_refuses_a_resource_it_cannot_serve_naming_the_field(server):
    from servers.snapshot import DefinitionError

    with pytest.raises(DefinitionError, match=r"resources\[0\]\.config\.url: required"):
        snapshot_of(server, {"uri": "docs://x", "name": "x", "kind": "fetched", "config": {}})
    with pytest.raises(DefinitionError, match=r"resources\[1\]\.kind: Unknown resource kind"):
        snapshot_of(
            server,
            {"uri": "docs://a", "name": "a", "text": "fine"},
            {"uri": "docs://b", "name": "b", "kind": "ftp"},
        )
