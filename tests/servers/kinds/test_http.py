"""The http kind against real HTTP servers on loopback (pytest-httpserver); the deployment
allow-list is opened for 127.0.0.0/8 by the autouse fixture, except where a test closes it."""

import base64
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from asgiref.sync import async_to_sync
from pytest_httpserver import HTTPServer
from werkzeug import Response

from infra.redis import sync_client
from mcp_protocol.context import NullContext
from mcp_protocol.errors import ToolError
from servers.kinds import http
from servers.kinds.http import sending as http_sending
from servers.models import Server
from tests.waiting import becomes, wait_until
from vault.models import Secret


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture(autouse=True)
def allow_loopback(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="api-tools", name="api-tools")


def make(config, *, output_schema=None, server=None, server_http=None, name="t"):
    problems = http.validate_config(config)
    assert problems == []
    tool_def = {"name": name, "config": config}
    if output_schema is not None:
        tool_def["outputSchema"] = output_schema
    if server is not None:
        tool_def["_server"] = {
            "id": server.pk,
            "organizationId": server.organization_id,
            "http": server_http or {},
        }
    elif server_http is not None:
        tool_def["_server"] = {"http": server_http}
    return http.compile(tool_def)


class Ctx(NullContext):
    def __init__(self, client_headers=None, trace=False):
        super().__init__()
        self.client_headers = client_headers or {}
        self.slept: list[float] = []
        if trace:
            self.http_trace = []

    async def sleep(self, seconds):
        self.slept.append(seconds)
        await super().sleep(seconds)


def call(tool, arguments=None, ctx=None):
    return async_to_sync(http.call)(tool, arguments or {}, ctx or Ctx())


@contextmanager
def kept_in_redis(pattern: str):
    """Yields a list that holds, after the block, the one key matching `pattern` it added."""
    before = set(sync_client().keys(pattern))
    added: list[bytes] = []
    yield added
    (key,) = set(sync_client().keys(pattern)) - before
    added.append(key)


def expired(added: list[bytes], what: str) -> None:
    """Wait for Redis to expire a key (its TTL, set by the code under test, is the subject)."""
    wait_until(lambda: not sync_client().exists(added[0]), timeout=10, what=f"{what} to expire")


def fails(tool, arguments=None, ctx=None) -> str:
    with pytest.raises(ToolError) as caught:
        call(tool, arguments, ctx)
    return caught.value.message


def requests_of(httpserver):
    return [request for request, _ in httpserver.log]


def text(result) -> str:
    return result["content"][0]["text"]


# -- validation -----------------------------------------------------------------------------------


def test_a_full_config_is_valid():
    config = {
        "method": "POST",
        "url": "https://api.example.com/users/{id}",
        "parameters": {
            "id": "path",
            "q": {"in": "query", "name": "query"},
            "city": {"in": "body", "path": "address.city"},
        },
        "headers": {"Accept": "application/json"},
        "body": {"kind": "user"},
        "auth": {
            "type": "oauth2",
            "tokenUrl": "https://a/t",
            "clientId": "c",
            "clientSecret": "{{ secrets.S }}",
            "scope": "read",
        },
        "response": {"select": "data[0]", "template": "{{ response.name }}", "maxBytes": 1000},
        "timeoutSeconds": 5,
        "retries": 2,
        "retryBackoffMs": 100,
        "cacheTtlSeconds": 60,
        "maxConcurrency": 3,
        "forwardHeaders": ["x-user-token"],
        "followRedirects": False,
    }
    assert http.validate_config(config) == []


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"url": "https://x"} | {"method": "FETCH"}, "config.method: must be one of"),
        ({}, "config.url: required"),
        ({"url": "ftp://x"}, "config.url: must start with"),
        ({"url": "https://x", "colour": 1}, "config.colour: unknown field"),
        ({"url": "https://x", "parameters": {"a": "cookie"}}, "config.parameters.a.in: must be"),
        (
            {"url": "https://x", "parameters": {"a": {"in": "query", "path": "x.y"}}},
            "config.parameters.a.path: only for in: body",
        ),
        ({"url": "https://x", "auth": {"type": "digest"}}, "config.auth.type: must be one of"),
        ({"url": "https://x", "auth": {"type": "bearer"}}, "config.auth.token: required"),
        (
            {
                "url": "https://x",
                "auth": {"type": "apiKey", "name": "k", "value": "v", "in": "cookie"},
            },
            "config.auth.in: must be header or query",
        ),
        ({"url": "https://x", "response": {"select": "a[?"}}, "config.response.select: not a"),
        (
            {"url": "https://x", "response": {"template": "{{ secrets.TOKEN }}"}},
            "config.response.template: secrets are not available here",
        ),
        ({"url": "https://x", "response": {"template": "{{ oops"}}, "config.response.template:"),
        ({"url": "https://x", "bodyType": "form", "body": "a=b"}, "config.body: must be a mapping"),
        ({"url": "https://x", "bodyType": "xml"}, "config.bodyType: must be one of"),
        ({"url": "https://x", "retries": 50}, "config.retries: must be at most 5"),
        ({"url": "https://x", "timeoutSeconds": 0}, "config.timeoutSeconds: must be more than 0"),
        (
            {"url": "https://x", "forwardHeaders": ["Authorization"]},
            "config.forwardHeaders[0]: Authorization cannot be forwarded",
        ),
        ({"url": "https://x", "forwardHeaders": ["mcp-session-id"]}, "cannot be forwarded"),
        ({"url": "https://x", "headers": "X: y"}, "config.headers: must be a mapping"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(config, message):
    assert any(message in problem for problem in http.validate_config(config)), (
        http.validate_config(config)
    )


@pytest.mark.parametrize(
    "config",
    [
        {"url": "https://{host}/x", "auth": {"type": "bearer", "token": "{{ secrets.T }}"}},
        {"url": "https://{{ region }}.api.example.com/", "headers": {"K": "{{ secrets.K }}"}},
        {"url": "{{ base }}/v1", "forwardHeaders": ["x-user-token"]},
        {"url": "https://{{ secretsHost }}/", "auth": {"type": "basic", "username": "u"}},
    ],
)
def test_a_tool_that_sends_credentials_cannot_take_its_host_from_arguments(config):
    assert any("the host cannot come from arguments" in p for p in http.validate_config(config))


@pytest.mark.parametrize(
    "config",
    [
        {"url": "https://{host}/x"},  # no credentials: the guard alone decides
        {"url": "{{ secrets.BASE_URL }}/x", "auth": {"type": "bearer", "token": "{{ secrets.T }}"}},
        {"url": "https://api.example.com/{{ path }}", "headers": {"K": "{{ secrets['K'] }}"}},
    ],
)
def test_hosts_from_secrets_or_without_credentials_are_fine(config):
    assert http.validate_config(config) == []


def test_the_secrets_a_config_uses_can_be_listed():
    config = {
        "url": "{{ secrets.BASE }}/x",
        "headers": {"A": "{{ secrets['KEY'] }}"},
        "auth": {"type": "bearer", "token": "{{ secrets.TOKEN }}"},
        "body": "{{ mysecrets.X }}",
    }
    assert http.referenced_secrets(config) == {"BASE", "KEY", "TOKEN"}


def test_server_settings_are_validated_too():
    assert http.validate_server_settings({"baseUrl": "https://api.example.com"}) == []
    problems = http.validate_server_settings({"baseUrl": "api", "forwardHeaders": ["cookie"]})
    assert any(p.startswith("http.baseUrl") for p in problems)
    assert any(p.startswith("http.forwardHeaders[0]") for p in problems)


# -- request mapping ------------------------------------------------------------------------------


def test_path_placeholders_are_url_encoded_arguments(httpserver):
    httpserver.expect_request("/users/a b/c/orders").respond_with_json({"ok": True})
    tool = make({"url": httpserver.url_for("/users/{id}/orders")})
    call(tool, {"id": "a b/c"})
    assert requests_of(httpserver)[0].environ["REQUEST_URI"] == "/users/a%20b%2Fc/orders"


@pytest.mark.parametrize("value", ["..", "."])
def test_a_path_argument_cannot_climb_to_another_endpoint(httpserver, value):
    httpserver.expect_request("/api/users/" + value.replace(".", "%2E")).respond_with_data("")
    httpserver.expect_request("/api/users/" + value).respond_with_data("")
    call(make({"url": httpserver.url_for("/api/users/{id}")}), {"id": value})
    assert requests_of(httpserver)[0].environ["REQUEST_URI"] == "/api/users/" + "%2E" * len(value)


def test_a_missing_path_argument_is_a_tool_error(httpserver):
    tool = make({"url": httpserver.url_for("/users/{id}")})
    assert "'id' is required" in fails(tool, {})
    assert httpserver.log == []


def test_query_parameters_are_mapped_renamed_repeated_and_fixed(httpserver):
    httpserver.expect_request("/search").respond_with_json([])
    tool = make(
        {
            "url": httpserver.url_for("/search"),
            "parameters": {
                "q": "query",
                "limit": {"in": "query", "name": "per_page"},
                "tags": "query",
                "exact": "query",
            },
            "query": {"v": "2", "lang": "{{ lang }}"},
        }
    )
    call(tool, {"q": "cats & dogs", "limit": 5, "tags": ["a", "b"], "exact": True, "lang": "en"})
    args = requests_of(httpserver)[0].args
    assert args["q"] == "cats & dogs"
    assert args["per_page"] == "5"
    assert args.getlist("tags") == ["a", "b"]
    assert args["exact"] == "true"
    assert args["v"] == "2" and args["lang"] == "en"


def test_headers_come_from_arguments_and_fixed_templates(httpserver):
    httpserver.expect_request("/h").respond_with_data("ok")
    tool = make(
        {
            "url": httpserver.url_for("/h"),
            "parameters": {"trace": {"in": "header", "name": "X-Trace"}},
            "headers": {"X-Fixed": "yes", "X-Greeting": "hello {{ who }}"},
        }
    )
    call(tool, {"trace": "t-1", "who": "bob"})
    headers = requests_of(httpserver)[0].headers
    assert headers["X-Trace"] == "t-1"
    assert headers["X-Fixed"] == "yes" and headers["X-Greeting"] == "hello bob"


def test_body_fields_merge_into_the_body_template_keeping_types(httpserver):
    httpserver.expect_request("/users", method="POST").respond_with_json({"id": 7})
    tool = make(
        {
            "method": "POST",
            "url": httpserver.url_for("/users"),
            "parameters": {"city": {"in": "body", "path": "address.city"}, "name": "body"},
            "body": {"kind": "user", "age": "{{ age }}", "address": {"country": "NL"}},
        }
    )
    call(tool, {"city": "Utrecht", "name": "Ann", "age": 41})
    sent = requests_of(httpserver)[0]
    assert sent.headers["Content-Type"] == "application/json"
    assert json.loads(sent.data) == {
        "kind": "user",
        "age": 41,
        "name": "Ann",
        "address": {"country": "NL", "city": "Utrecht"},
    }


def test_unmapped_arguments_go_to_the_query_for_get_and_the_body_for_post(httpserver):
    httpserver.expect_request("/x", method="GET").respond_with_data("g")
    httpserver.expect_request("/x", method="POST").respond_with_data("p")
    call(make({"url": httpserver.url_for("/x")}), {"a": 1, "b": "two"})
    call(make({"method": "POST", "url": httpserver.url_for("/x")}), {"a": 1, "b": "two"})
    get, post = requests_of(httpserver)
    assert dict(get.args) == {"a": "1", "b": "two"}
    assert json.loads(post.data) == {"a": 1, "b": "two"}


def test_a_body_template_decides_what_is_sent(httpserver):
    httpserver.expect_request("/x", method="POST").respond_with_data("p")
    tool = make(
        {
            "method": "POST",
            "url": httpserver.url_for("/x"),
            "body": {"wrapped": {"value": "{{ a }}"}},
        }
    )
    call(tool, {"a": 3, "unused": "x"})
    sent = requests_of(httpserver)[0]
    assert json.loads(sent.data) == {"wrapped": {"value": 3}}
    assert not sent.args


def test_form_bodies_are_urlencoded(httpserver):
    httpserver.expect_request("/form", method="POST").respond_with_data("ok")
    tool = make(
        {
            "method": "POST",
            "url": httpserver.url_for("/form"),
            "bodyType": "form",
            "parameters": {"name": "form", "n": "form"},
            "body": {"source": "mcp"},
        }
    )
    call(tool, {"name": "Ann Lee", "n": 3})
    sent = requests_of(httpserver)[0]
    assert sent.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert dict(sent.form) == {"name": "Ann Lee", "n": "3", "source": "mcp"}


def test_multipart_bodies_carry_fields_and_files(httpserver):
    httpserver.expect_request("/upload", method="POST").respond_with_data("ok")
    tool = make(
        {
            "method": "POST",
            "url": httpserver.url_for("/upload"),
            "bodyType": "multipart",
            "parameters": {
                "title": "multipart",
                "doc": {"in": "multipart", "filename": "notes.txt", "contentType": "text/plain"},
            },
        }
    )
    call(tool, {"title": "Notes", "doc": "line one\nline two"})
    sent = requests_of(httpserver)[0]
    assert sent.headers["Content-Type"].startswith("multipart/form-data")
    assert sent.form["title"] == "Notes"
    upload = sent.files["doc"]
    assert upload.filename == "notes.txt" and upload.mimetype == "text/plain"
    assert upload.read() == b"line one\nline two"


def test_multipart_without_files_is_still_multipart(httpserver):
    httpserver.expect_request("/m", method="POST").respond_with_data("ok")
    tool = make(
        {
            "method": "POST",
            "url": httpserver.url_for("/m"),
            "bodyType": "multipart",
            "parameters": {"a": "multipart"},
        }
    )
    call(tool, {"a": "1"})
    sent = requests_of(httpserver)[0]
    assert sent.headers["Content-Type"].startswith("multipart/form-data")
    assert sent.form["a"] == "1"


def test_text_bodies_are_sent_as_rendered(httpserver):
    httpserver.expect_request("/t", method="PUT").respond_with_data("ok")
    tool = make(
        {
            "method": "PUT",
            "url": httpserver.url_for("/t"),
            "bodyType": "text",
            "body": "Dear {{ who }},",
        }
    )
    call(tool, {"who": "Ann"})
    sent = requests_of(httpserver)[0]
    assert sent.data == b"Dear Ann," and sent.headers["Content-Type"].startswith("text/plain")


def test_a_relative_url_joins_the_servers_base_url_and_headers(httpserver):
    httpserver.expect_request("/v1/items/3").respond_with_json({"id": 3})
    tool = make(
        {"url": "/v1/items/{id}"},
        server_http={"baseUrl": httpserver.url_for("/"), "headers": {"X-Client": "gm"}},
    )
    call(tool, {"id": 3})
    assert requests_of(httpserver)[0].headers["X-Client"] == "gm"


# -- auth -----------------------------------------------------------------------------------------


def test_bearer_auth_takes_its_token_from_the_vault(httpserver, org, server):
    Secret.store(org, "API_TOKEN", "tok-live-123")
    httpserver.expect_request("/me").respond_with_json({"me": 1})
    tool = make(
        {
            "url": httpserver.url_for("/me"),
            "auth": {"type": "bearer", "token": "{{ secrets.API_TOKEN }}"},
        },
        server=server,
    )
    call(tool)
    assert requests_of(httpserver)[0].headers["Authorization"] == "Bearer tok-live-123"


def test_an_api_key_goes_in_a_header_or_the_query(httpserver, org, server):
    Secret.store(org, "KEY", "key-abc-999")
    httpserver.expect_request("/k").respond_with_data("ok")
    in_header = make(
        {
            "url": httpserver.url_for("/k"),
            "auth": {"type": "apiKey", "name": "X-Api-Key", "value": "{{ secrets.KEY }}"},
        },
        server=server,
    )
    in_query = make(
        {
            "url": httpserver.url_for("/k"),
            "auth": {
                "type": "apiKey",
                "in": "query",
                "name": "api_key",
                "value": "{{ secrets.KEY }}",
            },
        },
        server=server,
    )
    call(in_header)
    call(in_query)
    first, second = requests_of(httpserver)
    assert first.headers["X-Api-Key"] == "key-abc-999"
    assert second.args["api_key"] == "key-abc-999"


def test_basic_auth_sends_the_username_and_password(httpserver, org, server):
    Secret.store(org, "PASS", "pa:ss word")
    httpserver.expect_request("/b").respond_with_data("ok")
    tool = make(
        {
            "url": httpserver.url_for("/b"),
            "auth": {"type": "basic", "username": "ann", "password": "{{ secrets.PASS }}"},
        },
        server=server,
    )
    call(tool)
    authorization = requests_of(httpserver)[0].authorization
    assert (authorization.username, authorization.password) == ("ann", "pa:ss word")


def test_server_auth_applies_unless_the_tool_turns_it_off(httpserver, org, server):
    Secret.store(org, "T", "server-wide-token")
    httpserver.expect_request("/x").respond_with_data("ok")
    server_http = {"auth": {"type": "bearer", "token": "{{ secrets.T }}"}}
    call(make({"url": httpserver.url_for("/x")}, server=server, server_http=server_http))
    call(
        make(
            {"url": httpserver.url_for("/x"), "auth": {"type": "none"}},
            server=server,
            server_http=server_http,
        )
    )
    first, second = requests_of(httpserver)
    assert first.headers["Authorization"] == "Bearer server-wide-token"
    assert "Authorization" not in second.headers


def test_a_missing_secret_is_a_tool_error_naming_it(httpserver, server):
    tool = make(
        {
            "url": httpserver.url_for("/x"),
            "auth": {"type": "bearer", "token": "{{ secrets.NOPE }}"},
        },
        server=server,
    )
    assert "The secret NOPE is not set for this server" in fails(tool)
    assert httpserver.log == []


def test_secrets_of_another_organization_are_not_reachable(httpserver, outsider_org, server):
    Secret.store(outsider_org, "API_TOKEN", "theirs")
    tool = make(
        {
            "url": httpserver.url_for("/x"),
            "auth": {"type": "bearer", "token": "{{ secrets.API_TOKEN }}"},
        },
        server=server,
    )
    assert "API_TOKEN is not set" in fails(tool)


def _oauth_config(httpserver, **extra):
    return {
        "url": httpserver.url_for("/data"),
        "auth": {
            "type": "oauth2",
            "tokenUrl": httpserver.url_for("/token"),
            "clientId": "client-1",
            "clientSecret": "{{ secrets.CLIENT_SECRET }}",
            "scope": "read",
            **extra,
        },
    }


def test_oauth_client_credentials_fetch_a_token_once_and_reuse_it(httpserver, org, server):
    Secret.store(org, "CLIENT_SECRET", "cs-123456")
    httpserver.expect_request("/token", method="POST").respond_with_json(
        {"access_token": "at-first", "token_type": "Bearer", "expires_in": 3600}
    )
    httpserver.expect_request("/data").respond_with_json({"rows": []})
    tool = make(_oauth_config(httpserver), server=server)
    call(tool)
    call(tool)
    token_requests = [r for r in requests_of(httpserver) if r.path == "/token"]
    data_requests = [r for r in requests_of(httpserver) if r.path == "/data"]
    assert len(token_requests) == 1
    assert dict(token_requests[0].form) == {
        "grant_type": "client_credentials",
        "scope": "read",
        "client_id": "client-1",
        "client_secret": "cs-123456",
    }
    assert [r.headers["Authorization"] for r in data_requests] == ["Bearer at-first"] * 2


def test_oauth_tokens_are_fetched_again_after_they_expire(httpserver, org, server):
    Secret.store(org, "CLIENT_SECRET", "cs-expiring")
    tokens = iter(["at-1", "at-2"])
    httpserver.expect_request("/token").respond_with_handler(
        lambda r: Response(
            json.dumps({"access_token": next(tokens), "expires_in": 31}),
            content_type="application/json",
        )
    )
    httpserver.expect_request("/data").respond_with_json({})
    tool = make(_oauth_config(httpserver, clientAuth="basic"), server=server)
    with kept_in_redis("mcp:http:oauth:*") as token:
        call(tool)
    expired(token, "the cached token (31 s minus the 30 s safety margin)")
    call(tool)
    data = [r.headers["Authorization"] for r in requests_of(httpserver) if r.path == "/data"]
    assert data == ["Bearer at-1", "Bearer at-2"]
    token_request = next(r for r in requests_of(httpserver) if r.path == "/token")
    assert token_request.authorization.username == "client-1"
    assert "client_secret" not in token_request.form


def test_an_upstream_401_refreshes_the_oauth_token_once(httpserver, org, server):
    Secret.store(org, "CLIENT_SECRET", "cs-revoked")
    tokens = iter(["at-revoked", "at-fresh"])
    httpserver.expect_request("/token").respond_with_handler(
        lambda r: Response(
            json.dumps({"access_token": next(tokens), "expires_in": 3600}),
            content_type="application/json",
        )
    )

    def data(request):
        if request.headers["Authorization"] == "Bearer at-fresh":
            return Response('{"ok": true, "token": "at-fresh"}', content_type="application/json")
        return Response("expired", status=401)

    httpserver.expect_request("/data").respond_with_handler(data)
    result = call(make(_oauth_config(httpserver), server=server))
    assert result["content"][0]["text"] == '{"ok":true,"token":"***"}'


def test_a_failing_token_endpoint_is_a_clear_error_without_the_client_secret(
    httpserver, org, server
):
    Secret.store(org, "CLIENT_SECRET", "cs-wrong-secret")
    httpserver.expect_request("/token").respond_with_json({"error": "invalid_client"}, status=401)
    message = fails(make(_oauth_config(httpserver), server=server))
    assert "401" in message and "invalid_client" in message
    assert "cs-wrong-secret" not in message


# -- per-end-user headers -------------------------------------------------------------------------


def test_allow_listed_client_headers_are_forwarded_and_nothing_else(httpserver):
    httpserver.expect_request("/x").respond_with_data("ok")
    tool = make(
        {
            "url": httpserver.url_for("/x"),
            "forwardHeaders": [
                "X-User-Token",
                {"from": "x-gh-token", "to": "Authorization", "prefix": "Bearer "},
            ],
        }
    )
    ctx = Ctx(
        client_headers={
            "x-user-token": "user-1-token",
            "x-gh-token": "gh-abc",
            "authorization": "Bearer gmcp_inbound_key",
            "x-other": "no",
        }
    )
    call(tool, ctx=ctx)
    headers = requests_of(httpserver)[0].headers
    assert headers["X-User-Token"] == "user-1-token"
    assert headers["Authorization"] == "Bearer gh-abc"
    assert "X-Other" not in headers
    assert "gmcp_inbound_key" not in str(headers)


def test_a_context_without_client_headers_forwards_nothing(httpserver):
    httpserver.expect_request("/x").respond_with_data("ok")
    call(
        make({"url": httpserver.url_for("/x"), "forwardHeaders": ["x-user-token"]}),
        ctx=NullContext(),
    )
    assert "X-User-Token" not in requests_of(httpserver)[0].headers


# -- response mapping -----------------------------------------------------------------------------


def test_a_jmespath_selector_picks_what_the_model_sees(httpserver):
    httpserver.expect_request("/list").respond_with_json(
        {"data": {"items": [{"name": "a", "n": 1}, {"name": "b", "n": 2}]}, "meta": {}}
    )
    tool = make(
        {"url": httpserver.url_for("/list"), "response": {"select": "data.items[?n > `1`].name"}}
    )
    assert text(call(tool)) == '["b"]'


def test_a_template_turns_the_response_into_text(httpserver):
    httpserver.expect_request("/w").respond_with_json({"temp": 21.5, "city": "Utrecht"})
    tool = make(
        {
            "url": httpserver.url_for("/w"),
            "response": {
                "template": "{{ response.city }}: {{ response.temp }}°C ({{ status }},"
                " asked for {{ args.q }})"
            },
        }
    )
    assert text(call(tool, {"q": "utr"})) == "Utrecht: 21.5°C (200, asked for utr)"


def test_json_becomes_structured_content_checked_against_the_output_schema(httpserver):
    httpserver.expect_request("/u").respond_with_json({"id": 1, "name": "Ann", "extra": True})
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    result = call(make({"url": httpserver.url_for("/u")}, output_schema=schema))
    assert result["structuredContent"] == {"id": 1, "name": "Ann", "extra": True}
    assert json.loads(text(result)) == result["structuredContent"]


def test_a_response_that_breaks_the_output_schema_is_a_tool_error(httpserver):
    httpserver.expect_request("/u").respond_with_json({"id": "one"})
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    message = fails(make({"url": httpserver.url_for("/u")}, output_schema=schema))
    assert "does not match the tool's outputSchema at id" in message


def test_structured_content_wraps_values_that_are_not_objects(httpserver):
    httpserver.expect_request("/n").respond_with_json([1, 2])
    result = call(make({"url": httpserver.url_for("/n"), "response": {"structured": True}}))
    assert result["structuredContent"] == {"result": [1, 2]}


def test_plain_text_is_passed_through(httpserver):
    httpserver.expect_request("/t").respond_with_data("just text", content_type="text/plain")
    result = call(make({"url": httpserver.url_for("/t")}))
    assert result == {"content": [{"type": "text", "text": "just text"}]}


def test_a_head_request_reports_status_and_headers(httpserver):
    httpserver.expect_request("/file", method="HEAD").respond_with_data(
        "",
        headers={"ETag": '"v1"', "Last-Modified": "Sun, 22 Nov 2026 01:00:00 GMT"},
        content_type="application/pdf",
    )
    shown = text(call(make({"method": "HEAD", "url": httpserver.url_for("/file")})))
    assert shown.startswith("200 OK")
    assert 'etag: "v1"' in shown and "content-type: application/pdf" in shown


def test_an_empty_204_says_so(httpserver):
    httpserver.expect_request("/d", method="DELETE").respond_with_data("", status=204)
    result = call(make({"method": "DELETE", "url": httpserver.url_for("/d")}))
    assert "204" in text(result) and not result.get("isError")


@pytest.mark.parametrize(
    ("content_type", "block_type"),
    [("image/png", "image"), ("audio/mpeg", "audio"), ("application/pdf", "resource")],
)
def test_binaries_become_image_audio_or_resource_content(httpserver, content_type, block_type):
    payload = bytes(range(256))
    httpserver.expect_request("/bin").respond_with_data(payload, content_type=content_type)
    block = call(make({"url": httpserver.url_for("/bin")}))["content"][0]
    assert block["type"] == block_type
    if block_type == "resource":
        assert block["resource"]["mimeType"] == content_type
        assert base64.b64decode(block["resource"]["blob"]) == payload
        assert block["resource"]["uri"] == httpserver.url_for("/bin")
    else:
        assert block["mimeType"] == content_type
        assert base64.b64decode(block["data"]) == payload


def test_a_large_text_response_is_cut_and_the_model_is_told(httpserver):
    httpserver.expect_request("/big").respond_with_json({"rows": ["x" * 100] * 100})
    tool = make({"url": httpserver.url_for("/big"), "response": {"maxBytes": 500}})
    shown = text(call(tool))
    assert shown.startswith("{") and '"rows"' in shown
    assert "[Truncated: the response was larger than 500 bytes" in shown
    assert len(shown) < 700


def test_a_large_binary_is_refused_rather_than_cut(httpserver):
    httpserver.expect_request("/img").respond_with_data(
        b"\x89PNG" + b"0" * 5000, content_type="image/png"
    )
    tool = make({"url": httpserver.url_for("/img"), "response": {"maxBytes": 1000}})
    assert "larger than the 1000-byte limit" in fails(tool)


def test_invalid_json_is_a_tool_error(httpserver):
    httpserver.expect_request("/j").respond_with_data("{nope", content_type="application/json")
    assert "invalid JSON" in fails(make({"url": httpserver.url_for("/j")}))


# -- upstream errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (400, "check the arguments"),
        (401, "did not accept the credentials"),
        (403, "not allowed to do this"),
        (404, "found nothing"),
        (422, "could not process"),
        (500, "failed; try again later"),
        (418, "refused the request"),
    ],
)
def test_upstream_errors_tell_the_model_what_went_wrong(httpserver, status, hint):
    httpserver.expect_request("/e").respond_with_json({"message": "details here"}, status=status)
    message = fails(make({"url": httpserver.url_for("/e")}))
    assert message.startswith(f"The upstream API answered {status}")
    assert hint in message
    assert "details here" in message


def test_upstream_errors_never_carry_secret_values(httpserver, org, server):
    Secret.store(org, "KEY", "very-secret-key")
    httpserver.expect_request("/e").respond_with_handler(
        lambda r: Response(f"bad key {r.args['key']} in {r.url}", status=403)
    )
    tool = make(
        {
            "url": httpserver.url_for("/e"),
            "auth": {"type": "apiKey", "in": "query", "name": "key", "value": "{{ secrets.KEY }}"},
        },
        server=server,
    )
    message = fails(tool)
    assert "very-secret-key" not in message
    assert "bad key *** in" in message


def test_a_long_error_body_is_shortened(httpserver):
    httpserver.expect_request("/e").respond_with_data("z" * 5000, status=400)
    message = fails(make({"url": httpserver.url_for("/e")}))
    assert len(message) < 700 and message.endswith("…")


def test_a_refused_destination_is_a_tool_error(httpserver, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    message = fails(make({"url": httpserver.url_for("/x")}))
    assert "not allowed" in message and "loopback" in message
    assert httpserver.log == []


def test_a_timeout_is_a_tool_error(httpserver):
    def slow(request):
        time.sleep(1)  # deliberate: a slow upstream is the subject
        return Response("late")

    httpserver.expect_request("/slow").respond_with_handler(slow)
    message = fails(make({"url": httpserver.url_for("/slow"), "timeoutSeconds": 0.2}))
    assert "could not be reached" in message and "timed out" in message
    _wait_for_requests(httpserver, 1)  # the late request must not land in the next test's log


# -- retries --------------------------------------------------------------------------------------


def _wait_for_requests(httpserver, count, seconds=5.0):
    becomes(lambda: len(httpserver.log) >= count, timeout=seconds)


def _sequence(httpserver, path, *responses, method="GET"):
    for response in responses:
        httpserver.expect_ordered_request(path, method=method).respond_with_response(response)


def test_idempotent_calls_are_retried_on_5xx(httpserver):
    _sequence(
        httpserver,
        "/r",
        Response("busy", status=503),
        Response("down", status=502),
        Response('{"ok": 1}', content_type="application/json"),
    )
    ctx = Ctx()
    result = call(
        make({"url": httpserver.url_for("/r"), "retries": 2, "retryBackoffMs": 10}), ctx=ctx
    )
    assert text(result) == '{"ok":1}'
    assert len(httpserver.log) == 3
    assert len(ctx.slept) == 2 and ctx.slept[1] > ctx.slept[0] * 0.9


def test_non_idempotent_calls_are_not_retried_on_5xx(httpserver):
    httpserver.expect_request("/r", method="POST").respond_with_data("busy", status=503)
    tool = make(
        {"method": "POST", "url": httpserver.url_for("/r"), "retries": 3, "retryBackoffMs": 10}
    )
    assert "503" in fails(tool)
    assert len(httpserver.log) == 1


def test_429_is_retried_for_any_method_honouring_retry_after(httpserver):
    _sequence(
        httpserver,
        "/r",
        Response("slow down", status=429, headers={"Retry-After": "1"}),
        Response("done"),
        method="POST",
    )
    ctx = Ctx()
    started = time.perf_counter()
    result = call(make({"method": "POST", "url": httpserver.url_for("/r"), "retries": 1}), ctx=ctx)
    assert text(result) == "done"
    assert ctx.slept == [1.0]
    assert time.perf_counter() - started >= 1.0


def test_a_retry_after_beyond_the_limit_is_not_waited_for(httpserver):
    httpserver.expect_request("/r").respond_with_data(
        "later", status=429, headers={"Retry-After": "3600"}
    )
    ctx = Ctx()
    message = fails(make({"url": httpserver.url_for("/r"), "retries": 2}), ctx=ctx)
    assert "429" in message and "rate limiting" in message
    assert ctx.slept == [] and len(httpserver.log) == 1


def test_retries_stop_after_the_configured_count(httpserver):
    httpserver.expect_request("/r").respond_with_data("down", status=500)
    assert "500" in fails(
        make({"url": httpserver.url_for("/r"), "retries": 2, "retryBackoffMs": 5})
    )
    assert len(httpserver.log) == 3


def test_network_failures_of_idempotent_calls_are_retried(httpserver):
    calls = []

    def flaky(request):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.6)  # deliberate: the first attempt is too slow and times out
        return Response("recovered")

    httpserver.expect_request("/f").respond_with_handler(flaky)
    tool = make(
        {
            "url": httpserver.url_for("/f"),
            "timeoutSeconds": 0.3,
            "retries": 1,
            "retryBackoffMs": 400,
        }
    )
    assert text(call(tool)) == "recovered"


def test_backoff_grows_exponentially_with_jitter():
    tool = make({"url": "https://api.example.com/", "retryBackoffMs": 100})
    for attempt in range(4):
        delays = {http_sending._backoff(tool, attempt) for _ in range(20)}
        assert all(0.05 * 2**attempt <= d <= 0.1 * 2**attempt for d in delays)
        assert len(delays) > 1


# -- cache ----------------------------------------------------------------------------------------


def test_get_responses_are_cached_for_the_tools_ttl(httpserver):
    counter = iter(range(100))
    httpserver.expect_request("/c").respond_with_handler(
        lambda r: Response(json.dumps({"n": next(counter)}), content_type="application/json")
    )
    tool = make(
        {"url": httpserver.url_for("/c"), "cacheTtlSeconds": 60, "parameters": {"q": "query"}}
    )
    first = call(tool, {"q": "a"})
    assert call(tool, {"q": "a"}) == first
    assert call(tool, {"q": "b"}) != first
    assert len(httpserver.log) == 2


def test_cached_responses_expire(httpserver):
    httpserver.expect_request("/c").respond_with_data("x")
    tool = make(
        {"url": httpserver.url_for("/c"), "cacheTtlSeconds": 1, "parameters": {"q": "query"}}
    )
    with kept_in_redis("mcp:http:cache:*") as cached:
        call(tool, {"q": "expiring"})
    expired(cached, "the cached response")
    call(tool, {"q": "expiring"})
    assert len(httpserver.log) == 2


def test_errors_and_writes_are_not_cached(httpserver):
    httpserver.expect_request("/e").respond_with_data("no", status=404)
    httpserver.expect_request("/w", method="POST").respond_with_data("ok")
    failing = make({"url": httpserver.url_for("/e"), "cacheTtlSeconds": 60})
    writing = make({"method": "POST", "url": httpserver.url_for("/w"), "cacheTtlSeconds": 60})
    for _ in range(2):
        with pytest.raises(ToolError):
            call(failing)
        call(writing)
    assert len(httpserver.log) == 4


def test_the_cache_keeps_end_users_apart_and_holds_no_credentials(httpserver, org, server):
    from infra.redis import sync_client

    Secret.store(org, "KEY", "cache-secret-key")
    httpserver.expect_request("/me").respond_with_handler(
        lambda r: Response(r.headers.get("X-User", ""))
    )
    tool = make(
        {
            "url": httpserver.url_for("/me"),
            "cacheTtlSeconds": 60,
            "forwardHeaders": ["x-user"],
            "auth": {"type": "apiKey", "in": "query", "name": "k", "value": "{{ secrets.KEY }}"},
        },
        server=server,
    )
    assert text(call(tool, ctx=Ctx({"x-user": "alice-token"}))) == "***"  # echoed: masked
    assert text(call(tool, ctx=Ctx({"x-user": "bob-token-1"}))) == "***"
    assert len(httpserver.log) == 2
    call(tool, ctx=Ctx({"x-user": "alice-token"}))
    assert len(httpserver.log) == 2
    client = sync_client()
    keys = client.keys(f"mcp:http:cache:{server.pk}:*")
    assert len(keys) == 2
    for key in keys:
        stored = key + client.get(key)
        assert b"cache-secret-key" not in stored
        assert b"alice-token" not in key and b"bob-token-1" not in key


# -- concurrency ----------------------------------------------------------------------------------


@pytest.fixture
def threaded_server():
    server = HTTPServer(host="127.0.0.1", threaded=True)
    server.start()
    yield server
    server.clear()
    if server.is_running():
        server.stop()


def _in_flight_handler(delay: float):
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def handler(request):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(delay)  # deliberate: requests held in flight, to count them
        with lock:
            state["now"] -= 1
        return Response("ok")

    return handler, state


def _call_together(tool, count):
    async def together():
        import asyncio

        return await asyncio.gather(
            *(http.call(tool, {}, Ctx()) for _ in range(count)), return_exceptions=True
        )

    return async_to_sync(together)()


def test_calls_beyond_the_concurrency_cap_wait_their_turn(threaded_server):
    handler, state = _in_flight_handler(0.2)
    threaded_server.expect_request("/slow").respond_with_handler(handler)
    capped = make({"url": threaded_server.url_for("/slow"), "maxConcurrency": 2})
    results = _call_together(capped, 5)
    assert all(isinstance(r, dict) for r in results)
    assert state["max"] == 2


def test_uncapped_calls_do_run_together(threaded_server):
    handler, state = _in_flight_handler(0.2)
    threaded_server.expect_request("/slow").respond_with_handler(handler)
    results = _call_together(make({"url": threaded_server.url_for("/slow")}), 4)
    assert all(isinstance(r, dict) for r in results)
    assert state["max"] >= 3


def test_a_call_that_cannot_get_a_slot_in_time_is_told_so(threaded_server):
    handler, _ = _in_flight_handler(0.8)
    threaded_server.expect_request("/slow").respond_with_handler(handler)
    tool = make(
        {"url": threaded_server.url_for("/slow"), "maxConcurrency": 1, "timeoutSeconds": 0.5}
    )
    results = _call_together(tool, 2)
    errors = [r for r in results if isinstance(r, ToolError)]
    assert any("Too many calls of t are running at once" in e.message for e in errors)


# -- tracing (what a test run shows) --------------------------------------------------------------


def test_the_trace_shows_the_request_with_secrets_masked(httpserver, org, server):
    Secret.store(org, "TOKEN", "trace-secret-1")
    httpserver.expect_request("/t").respond_with_json({"echo": "trace-secret-1"})
    tool = make(
        {
            "url": httpserver.url_for("/t"),
            "parameters": {"q": "query"},
            "auth": {"type": "bearer", "token": "{{ secrets.TOKEN }}"},
        },
        server=server,
    )
    ctx = Ctx(trace=True)
    result = call(tool, {"q": "x"}, ctx)
    (exchange,) = ctx.http_trace
    assert exchange["request"]["headers"]["authorization"] == "Bearer ***"
    assert exchange["request"]["url"] == httpserver.url_for("/t") + "?q=x"
    assert exchange["response"]["status"] == 200
    assert "trace-secret-1" not in json.dumps(ctx.http_trace)
    assert "trace-secret-1" not in json.dumps(result)


# -- the workflow step ----------------------------------------------------------------------------


def test_a_workflow_http_step_feeds_later_steps(httpserver):
    from servers.kinds import workflow

    httpserver.expect_request("/users/7").respond_with_json({"user": {"name": "Ann"}})
    config = {
        "steps": [
            {
                "http": {
                    "url": httpserver.url_for("/users/{id}"),
                    "response": {"select": "user"},
                    "into": "found",
                }
            },
            {
                "return": {
                    "content": [
                        {"type": "text", "text": "{{ found.data.name }} ({{ found.status }})"}
                    ]
                }
            },
        ]
    }
    assert workflow.validate_config(config) == []
    compiled = workflow.compile({"name": "wf", "config": config})
    result = async_to_sync(workflow.call)(compiled, {"id": 7}, Ctx())
    assert result["content"][0]["text"] == "Ann (200)"


def test_a_workflow_http_step_can_let_later_steps_handle_errors(httpserver):
    from servers.kinds import workflow

    httpserver.expect_request("/missing").respond_with_data("gone", status=404)
    config = {
        "steps": [
            {"http": {"url": httpserver.url_for("/missing"), "into": "r", "failOnError": False}},
            {
                "return": {
                    "content": [{"type": "text", "text": "status {{ r.status }}: {{ r.body }}"}]
                }
            },
        ]
    }
    compiled = workflow.compile({"name": "wf", "config": config})
    result = async_to_sync(workflow.call)(compiled, {}, Ctx())
    assert result["content"][0]["text"] == "status 404: gone"


def test_a_workflow_http_step_is_validated_with_the_kinds_rules():
    from servers.kinds import workflow

    problems = workflow.validate_config({"steps": [{"http": {"method": "NOPE", "into": "1x"}}]})
    assert "config.steps[0].http.method: must be one of" in " ".join(problems)
    assert "config.steps[0].http.url: required" in " ".join(problems)
    assert any("into" in p for p in problems)


def test_concurrent_threads_share_nothing_but_the_cache(httpserver):
    # Two worker threads each with their own event loop: the per-loop semaphores keep working.
    httpserver.expect_request("/p").respond_with_data("ok")
    tool = make({"url": httpserver.url_for("/p"), "maxConcurrency": 1})
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: call(tool), range(4)))
    assert all(text(r) == "ok" for r in results)


def test_a_workflow_http_step_uses_the_servers_secrets(httpserver, org, server):
    from servers.kinds import workflow

    Secret.store(org, "TOKEN", "step-token-77")
    httpserver.expect_request("/me").respond_with_handler(
        lambda r: Response(
            json.dumps({"auth": r.headers["Authorization"], "name": "Ann"}),
            content_type="application/json",
        )
    )
    config = {
        "steps": [
            {
                "http": {
                    "url": httpserver.url_for("/me"),
                    "into": "me",
                    "auth": {"type": "bearer", "token": "{{ secrets.TOKEN }}"},
                }
            },
            {
                "return": {
                    "content": [{"type": "text", "text": "{{ me.body.name }} {{ me.body.auth }}"}]
                }
            },
        ]
    }
    compiled = workflow.compile(
        {
            "name": "wf",
            "config": config,
            "_server": {"id": server.pk, "organizationId": org.pk, "http": {}},
        }
    )
    result = async_to_sync(workflow.call)(compiled, {}, Ctx())
    assert result["content"][0]["text"] == "Ann Bearer ***"
    assert requests_of(httpserver)[0].headers["Authorization"] == "Bearer step-token-77"


def test_a_tool_compiled_by_the_snapshot_finds_its_servers_secrets_and_settings(
    httpserver, org, server
):
    from servers import methods
    from servers.snapshot import compile_definition

    Secret.store(org, "TOKEN", "snapshot-token-1")
    httpserver.expect_request("/v2/ping").respond_with_json({"pong": True})
    definition = {
        "slug": server.slug,
        "http": {
            "baseUrl": httpserver.url_for("/v2"),
            "auth": {"type": "bearer", "token": "{{ secrets.TOKEN }}"},
        },
        "tools": [
            {
                "name": "ping",
                "description": "Ping.",
                "kind": "http",
                "config": {"url": "/ping"},
                "outputSchema": {"type": "object", "required": ["pong"]},
            }
        ],
    }
    snapshot = compile_definition(
        definition, server_id=server.pk, organization_id=org.pk, generation="1"
    )
    result = async_to_sync(methods.tools_call)(snapshot, {"name": "ping", "arguments": {}}, Ctx())
    assert result["structuredContent"] == {"pong": True}
    assert requests_of(httpserver)[0].headers["Authorization"] == "Bearer snapshot-token-1"


# -- through the real endpoint --------------------------------------------------------------------


@pytest.fixture(scope="module")
def endpoint_with_loopback(live_database):
    from django.conf import settings as django_settings

    from tests.conftest import LiveServer

    if django_settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    live = LiveServer(live_database, extra_env={"OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8"})
    yield live
    live.stop()


def test_an_end_users_header_travels_from_the_mcp_client_to_the_api_and_no_further(
    httpserver, endpoint_with_loopback, committed, unique
):
    from accounts.models import ApiKey, User
    from servers.definition import import_definition
    from tests.gateway.endpoint.mcp_http import RawMcp

    def make():
        user = User.objects.create_user(f"http-{unique}@example.com", "long enough password 3")
        org = user.personal_organization()
        server = import_definition(
            {
                "slug": f"http-{unique}",
                "name": "http",
                "tools": [
                    {
                        "name": "whoami",
                        "description": "Who am I upstream?",
                        "inputSchema": {"type": "object"},
                        "kind": "http",
                        "config": {
                            "url": httpserver.url_for("/whoami"),
                            "headers": {"X-Service-Key": "{{ secrets.SERVICE_KEY }}"},
                            "forwardHeaders": [
                                {
                                    "from": "x-github-token",
                                    "to": "Authorization",
                                    "prefix": "token ",
                                }
                            ],
                        },
                    }
                ],
            },
            org,
        )
        Secret.store(org, "SERVICE_KEY", f"service-key-{unique}", server=server)
        return server, ApiKey.issue(org, "k")[1]

    server, raw_key = committed(make)
    httpserver.expect_request("/whoami").respond_with_handler(
        lambda r: Response(
            json.dumps({"login": "octocat", "echo": r.headers["Authorization"]}),
            content_type="application/json",
        )
    )
    mcp = RawMcp(endpoint_with_loopback.mcp_url(server.slug), key=raw_key)
    mcp.initialize()
    response, messages = mcp.request(
        "tools/call", {"name": "whoami", "arguments": {}}, x_github_token="gh-user-token-1"
    )
    assert response.status_code == 200, response.text
    result = messages[-1]["result"]
    assert json.loads(result["content"][0]["text"]) == {"login": "octocat", "echo": "token ***"}
    upstream = requests_of(httpserver)[0].headers
    assert upstream["Authorization"] == "token gh-user-token-1"
    assert upstream["X-Service-Key"] == f"service-key-{unique}"
    assert raw_key not in str(upstream)
