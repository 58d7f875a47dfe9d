"""Host functions in the sandbox: fetch through the SSRF guard, secrets (masked everywhere), log
and progress as notifications, and the trace a test run shows."""

import json

import pytest
from asgiref.sync import async_to_sync
from werkzeug import Response

from mcp_protocol.errors import ToolError
from servers.kinds import code
from servers.models import Server
from servers.testrun import TestRunContext
from vault.models import Secret

RESHAPE = """
async def main(args, ctx):
    r = await fetch(args["url"], headers={"X-Api-Key": secrets["API_KEY"]})
    items = r["json"]["items"]
    log("info", f"got {len(items)} items")
    return {"names": [item["name"].upper() for item in items], "status": r["status"]}
"""


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture(autouse=True)
def allow_loopback(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="code-tools", name="code-tools")


def tool_for(server, source, **kwargs):
    config = {"source": source, **kwargs}
    assert code.validate_config(config) == []
    return code.compile(
        {
            "name": "t",
            "config": config,
            "_server": {"id": server.pk, "organizationId": server.organization_id},
        }
    )


def call(tool, arguments=None, ctx=None):
    return async_to_sync(code.call)(tool, arguments or {}, ctx or TestRunContext())


def fails(tool, arguments=None, ctx=None) -> str:
    with pytest.raises(ToolError) as caught:
        call(tool, arguments, ctx)
    return caught.value.message


def test_fetch_sends_the_secret_and_the_code_reshapes_the_json(httpserver, org, server):
    Secret.store(org, "API_KEY", "key-live-4242", server=server)
    httpserver.expect_request("/items", headers={"X-Api-Key": "key-live-4242"}).respond_with_json(
        {"items": [{"name": "ada"}, {"name": "grace"}]}
    )
    ctx = TestRunContext()
    ctx.use_test_secrets = False
    result = call(tool_for(server, RESHAPE), {"url": httpserver.url_for("/items")}, ctx)
    assert result["structuredContent"] == {"names": ["ADA", "GRACE"], "status": 200}
    assert ctx.logs == [{"level": "info", "data": "got 2 items", "logger": "code"}]
    (exchange,) = ctx.http_trace
    assert exchange["request"]["headers"]["X-Api-Key"] == "***"
    assert exchange["response"]["status"] == 200


def test_a_test_run_uses_the_secrets_test_value(httpserver, org, server):
    Secret.store(org, "API_KEY", "key-live-1", test_value="key-test-2", server=server)
    httpserver.expect_request("/items", headers={"X-Api-Key": "key-test-2"}).respond_with_json(
        {"items": []}
    )
    result = call(tool_for(server, RESHAPE), {"url": httpserver.url_for("/items")})
    assert result["structuredContent"] == {"names": [], "status": 200}


def test_secret_values_are_masked_in_results_logs_progress_and_errors(org, server):
    Secret.store(org, "TOKEN", "s3cr3t-value-77", server=server)
    tool = tool_for(
        server,
        "def main(args):\n"
        "    log('warning', 'token is ' + secrets['TOKEN'])\n"
        "    progress(1, 2, secrets['TOKEN'])\n"
        "    if args.get('fail'):\n"
        "        raise ValueError('bad ' + secrets['TOKEN'])\n"
        "    return {'leak': secrets['TOKEN'], 'text': 'x' + secrets['TOKEN']}\n",
    )
    ctx = TestRunContext()
    ctx.use_test_secrets = False
    result = call(tool, {}, ctx)
    assert "s3cr3t-value-77" not in json.dumps(result)
    assert result["structuredContent"] == {"leak": "***", "text": "x***"}
    assert ctx.logs[0]["data"] == "token is ***"
    assert ctx.progress_events[0]["message"] == "***"
    message = fails(tool, {"fail": True}, ctx)
    assert "s3cr3t-value-77" not in message and "ValueError: bad ***" in message


def test_only_the_secrets_the_source_names_enter_the_sandbox(org, server):
    Secret.store(org, "NAMED", "named-value", server=server)
    Secret.store(org, "OTHER", "other-value", server=server)
    tool = tool_for(
        server, "def main(args):\n    return sorted(secrets.keys())\nx = secrets['NAMED']\n"
    )
    assert call(tool)["content"][0]["text"] == '["NAMED"]'


def test_a_missing_secret_is_named_before_the_code_runs(server):
    tool = tool_for(server, "def main(args):\n    return secrets['NOPE']\n")
    assert fails(tool) == (
        "The secret NOPE is not set for this server: "
        "add it on the Secrets page of the dashboard (or POST /api/secrets/)."
    )


def test_fetch_to_a_private_address_is_refused_by_the_ssrf_guard(settings, server):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    tool = tool_for(
        server,
        "def main(args):\n"
        "    try:\n"
        "        fetch('http://127.0.0.1:9/secret')\n"
        "    except PermissionError as exc:\n"
        "        return 'refused: ' + str(exc)\n",
    )
    assert call(tool)["content"][0]["text"].startswith("refused: ")


def test_fetch_failures_are_exceptions_the_code_can_handle(server):
    tool = tool_for(
        server,
        "def main(args):\n"
        "    try:\n"
        "        fetch('ftp://example.com/x')\n"
        "    except PermissionError as exc:\n"
        "        return 'no: ' + str(exc)\n",
    )
    assert (
        call(tool)["content"][0]["text"]
        == "no: Only http and https URLs can be fetched, not 'ftp'."
    )


def test_fetch_posts_json_and_reads_text(httpserver, server):
    httpserver.expect_request("/echo", method="POST", json={"q": 1}).respond_with_handler(
        lambda request: Response(
            "plain " + request.get_data(as_text=True), content_type="text/plain"
        )
    )
    tool = tool_for(
        server,
        "def main(args):\n"
        "    r = fetch(args['url'], method='POST', json={'q': 1})\n"
        "    return {'text': r['text'], 'json': r['json'], 'ok': r['ok']}\n",
    )
    result = call(tool, {"url": httpserver.url_for("/echo")})
    assert result["structuredContent"] == {"text": 'plain {"q":1}', "json": None, "ok": True}


def test_bad_arguments_to_a_host_function_raise_inside_the_code(server):
    tool = tool_for(
        server,
        "def main(args):\n"
        "    try:\n"
        "        log('loud', 'x')\n"
        "    except ValueError as exc:\n"
        "        return str(exc)\n",
    )
    assert call(tool)["content"][0]["text"].startswith("log: level must be one of")


def test_a_test_run_lists_host_calls_with_their_timing(server):
    ctx = TestRunContext()
    tool = tool_for(
        server, "def main(args):\n    log('info', 'a')\n    progress(1)\n    return 1\n"
    )
    call(tool, {}, ctx)
    assert [entry["function"] for entry in ctx.host_calls] == ["log", "progress"]
    assert all(entry["ms"] >= 0 for entry in ctx.host_calls)


def test_odd_arguments_to_host_functions_are_errors_inside_the_code(server):
    tool = tool_for(
        server,
        "def main(args):\n"
        "    seen = []\n"
        "    for attempt in (\n"
        "        lambda: fetch('http://example.com', timeout='soon'),\n"
        "        lambda: fetch(),\n"
        "        lambda: log('info', {1: 'int keys'}, 'x', 'too many'),\n"
        "    ):\n"
        "        try:\n"
        "            attempt()\n"
        "        except (TypeError, ValueError) as exc:\n"
        "            seen.append(type(exc).__name__)\n"
        "    log('info', {1: 'int keys are fine in a log'})\n"
        "    return seen\n",
    )
    assert call(tool)["content"][0]["text"] == '["ValueError","TypeError","TypeError"]'


class StateStoreAway(TestRunContext):
    """A run whose notifications cannot be sent (the state store is away)."""

    async def log(self, level, data, logger=None):
        import redis

        raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379")


def test_a_failure_on_getmcps_side_is_a_runtime_error_the_code_can_catch(server):
    tool = tool_for(
        server,
        "def main(args):\n"
        "    try:\n"
        "        log('info', 'hello')\n"
        "    except RuntimeError as exc:\n"
        "        return 'carried on: ' + str(exc)\n",
    )
    text = call(tool, {}, StateStoreAway())["content"][0]["text"]
    assert text == "carried on: log() failed in getmcp (ConnectionError)."


def test_a_failure_on_getmcps_side_left_uncaught_is_a_tool_error(server):
    tool = tool_for(server, "def main(args):\n    log('info', 'hello')\n    return 'no'\n")
    message = fails(tool, {}, StateStoreAway())
    assert message.startswith("The code raised an error:")
    assert message.endswith("RuntimeError: log() failed in getmcp (ConnectionError).")
    assert "6379" not in message


def test_an_exception_type_the_sandbox_lacks_is_raised_as_a_runtime_error_naming_it():
    from servers.kinds.code.runtime import raised

    assert raised("PermissionError", "no") == {"exc_type": "PermissionError", "message": "no"}
    assert raised("ConnectionError", "down") == {
        "exc_type": "RuntimeError",
        "message": "ConnectionError: down",
    }
