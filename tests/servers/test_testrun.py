"""Test runs of tools, with real rows, real secrets and a real HTTP server on loopback."""

import json

import pytest
from django.core.management import CommandError, call_command

from servers.models import Server, Tool
from servers.testrun import UnknownTool, test_run_sync
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
    return Server.objects.create(organization=org, slug="weather", name="weather")


@pytest.fixture
def forecast(server, httpserver):
    Secret.store(server.organization, "API_TOKEN", "live-token-123", test_value="test-token-456")
    return Tool.objects.create(
        server=server,
        name="forecast",
        description="The forecast for a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        kind="http",
        config={
            "url": httpserver.url_for("/forecast/{city}"),
            "auth": {"type": "bearer", "token": "{{ secrets.API_TOKEN }}"},
            "response": {"select": "today"},
        },
    )


def test_a_test_run_reports_request_response_result_and_timing(httpserver, forecast):
    httpserver.expect_request("/forecast/Utrecht").respond_with_json(
        {"today": {"sky": "rain"}, "token_seen": "test-token-456"}
    )
    report = test_run_sync(forecast.server, "forecast", {"city": "Utrecht"})
    assert report["request"]["method"] == "GET"
    assert report["request"]["url"] == httpserver.url_for("/forecast/Utrecht")
    assert report["request"]["headers"]["authorization"] == "Bearer ***"
    assert report["response"]["status"] == 200
    assert json.loads(report["response"]["body"])["token_seen"] == "***"
    assert report["result"] == {"content": [{"type": "text", "text": '{"sky":"rain"}'}]}
    assert report["timing"]["totalMs"] >= report["timing"]["upstreamMs"] > 0
    assert report["timing"]["attempts"] == 1


def test_a_test_run_uses_the_test_secret_values(httpserver, forecast):
    httpserver.expect_request("/forecast/Delft").respond_with_json({"today": {}})
    test_run_sync(forecast.server, "forecast", {"city": "Delft"})
    request, _ = httpserver.log[0]
    assert request.headers["Authorization"] == "Bearer test-token-456"


def test_no_secret_value_appears_anywhere_in_the_report(httpserver, forecast):
    httpserver.expect_request("/forecast/Echo").respond_with_handler(
        lambda r: __import__("werkzeug").Response(
            f"you sent {r.headers['Authorization']} (live is live-token-123)", status=401
        )
    )
    report = test_run_sync(forecast.server, "forecast", {"city": "Echo"})
    dumped = json.dumps(report)
    assert "test-token-456" not in dumped and "live-token-123" not in dumped
    assert report["result"]["isError"] is True
    assert "401" in report["result"]["content"][0]["text"]


def test_the_report_says_which_secrets_had_test_values(httpserver, forecast):
    org = forecast.server.organization
    Secret.store(org, "REGION", "eu-west")
    forecast.config = {
        **forecast.config,
        "headers": {"X-Region": "{{ secrets.REGION }}", "X-Other": "{{ secrets.ABSENT }}"},
    }
    forecast.save()
    report = test_run_sync(forecast.server, "forecast", {"city": "Utrecht"})
    assert report["secrets"] == [
        {"name": "ABSENT", "value": "missing"},
        {"name": "API_TOKEN", "value": "test"},
        {"name": "REGION", "value": "live"},
    ]
    assert "ABSENT is not set" in report["result"]["content"][0]["text"]


def test_arguments_are_checked_against_the_input_schema(httpserver, forecast):
    report = test_run_sync(forecast.server, "forecast", {})
    assert report["result"]["isError"] is True
    assert "city" in report["result"]["content"][0]["text"]
    assert report["request"] is None and httpserver.log == []


def test_a_disabled_tool_can_still_be_test_run(httpserver, forecast):
    forecast.enabled = False
    forecast.save()
    httpserver.expect_request("/forecast/Oslo").respond_with_json({"today": {"sky": "snow"}})
    report = test_run_sync(forecast.server, "forecast", {"city": "Oslo"})
    assert report["result"]["content"][0]["text"] == '{"sky":"snow"}'


def test_a_refused_destination_shows_in_the_report(httpserver, forecast, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    report = test_run_sync(forecast.server, "forecast", {"city": "Utrecht"})
    assert report["result"]["isError"] is True
    assert "loopback" in report["exchanges"][0]["error"]
    assert report["response"] is None


def test_tools_of_other_kinds_can_be_test_run(server):
    Tool.objects.create(
        server=server,
        name="echo",
        description="Echo.",
        kind="static",
        config={"content": [{"type": "text", "text": "You said {{ message }}"}]},
    )
    report = test_run_sync(server, "echo", {"message": "hi"})
    assert report["result"]["content"][0]["text"] == "You said hi"
    assert report["exchanges"] == [] and report["request"] is None


def test_an_unknown_tool_is_an_error(server):
    with pytest.raises(UnknownTool, match="no tool named 'nope'"):
        test_run_sync(server, "nope", {})


def test_the_command_prints_the_report(httpserver, forecast, capsys):
    httpserver.expect_request("/forecast/Lyon").respond_with_json({"today": {"sky": "sun"}})
    call_command("tool", "test", "weather", "forecast", "--args", '{"city": "Lyon"}')
    report = json.loads(capsys.readouterr().out)
    assert report["result"]["content"][0]["text"] == '{"sky":"sun"}'
    assert "test-token-456" not in json.dumps(report)


def test_the_command_forwards_client_headers(httpserver, server):
    Tool.objects.create(
        server=server,
        name="me",
        description="Me.",
        kind="http",
        config={"url": httpserver.url_for("/me"), "forwardHeaders": ["x-user-token"]},
    )
    httpserver.expect_request("/me").respond_with_data("ok")
    call_command("tool", "test", "weather", "me", "--header", "X-User-Token: user-secret-1")
    request, _ = httpserver.log[0]
    assert request.headers["X-User-Token"] == "user-secret-1"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tool", "test", "weather", "forecast", "--args", "{nope"], "--args is not JSON"),
        (["tool", "test", "weather", "forecast", "--args", "[1]"], "must be a JSON object"),
        (["tool", "test", "nowhere", "forecast"], "No server with slug 'nowhere'"),
        (["tool", "test", "weather", "missing"], "no tool named 'missing'"),
        (["tool", "test", "weather", "forecast", "--header", "novalue"], "expected NAME:VALUE"),
    ],
)
def test_the_command_explains_bad_input(forecast, argv, message):
    with pytest.raises(CommandError, match=message):
        call_command(*argv)


def test_the_command_fails_when_the_tool_fails(httpserver, forecast):
    httpserver.expect_request("/forecast/X").respond_with_data("no", status=500)
    with pytest.raises(CommandError, match="The tool call failed"):
        call_command("tool", "test", "weather", "forecast", "--args", '{"city": "X"}')


def test_a_test_run_tries_the_draft_even_after_a_publish(server):
    from servers.publishing import publish

    publish(server, "1.0.0")
    Tool.objects.create(
        server=server,
        name="draft_only",
        description="Added after the publish.",
        input_schema={"type": "object", "properties": {}},
        kind="static",
        config={"content": [{"type": "text", "text": "from the draft"}]},
    )
    report = test_run_sync(server, "draft_only", {})
    assert report["result"]["content"][0]["text"] == "from the draft"
