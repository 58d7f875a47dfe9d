import pytest
from jsonschema import Draft202012Validator

from gateway.surfaces.webtools import (
    HTTP_STATUS,
    execute,
    metadata,
    not_found,
    rate_limited,
    requested_version,
)
from mcp_protocol.context import NullContext


def call(snapshot, body):
    return execute(snapshot, body, NullContext())


def test_metadata_lists_each_tool_as_an_action_with_its_schemas(snapshot):
    meta = metadata(snapshot)
    assert meta["name"] == "my-calculator"
    assert meta["version"] == "2.1.0"
    assert meta["description"] == "Use <script>alert(1)</script> carefully."
    add, echo = meta["actions"]
    assert add["name"] == "add" and add["description"] == "Add two numbers together."
    assert add["requestSchema"]["required"] == ["a", "b"]
    assert add["responseSchema"]["properties"] == {"sum": {"type": "number"}}
    assert echo["responseSchema"]["oneOf"][0]["type"] == "string"
    Draft202012Validator.check_schema(meta["configSchema"])
    assert meta["defaultConfig"] == {}


async def test_a_call_returns_the_ok_envelope_and_data_matching_the_response_schema(snapshot):
    status, body = await call(snapshot, {"action": "add", "request": {"a": 2, "b": 5}})
    assert (status, body) == (200, {"status": "ok", "data": {"sum": 7}})
    schema = metadata(snapshot)["actions"][0]["responseSchema"]
    assert not list(Draft202012Validator(schema).iter_errors(body["data"]))


async def test_session_id_version_and_empty_config_are_accepted(snapshot):
    body = {
        "sessionId": "abc",
        "version": "2.1.0",
        "action": "files/echo",
        "config": {},
        "request": {"message": "hi"},
    }
    assert await call(snapshot, body) == (200, {"status": "ok", "data": "You said hi"})


def _error(result):
    status, body = result
    assert body["status"] == "error"
    assert HTTP_STATUS[body["error"]["code"]] == status
    return status, body["error"]["code"], body["error"]["message"]


@pytest.mark.parametrize(
    "body, code, fragment",
    [
        ({"action": "add", "request": {"a": "x", "b": 1}}, "SCHEMA_ERROR", "request/a"),
        ({"action": "add", "request": {"a": 1}}, "SCHEMA_ERROR", "'b' is a required property"),
        ({"action": "add"}, "SCHEMA_ERROR", "request: required"),
        ({"action": "add", "request": [1]}, "SCHEMA_ERROR", "request: must be an object"),
        ({"request": {}}, "SCHEMA_ERROR", "action: required"),
        ({"action": "sub", "request": {}}, "SCHEMA_ERROR", "unknown action 'sub'"),
        ({"action": "add", "request": {}, "config": {"units": "si"}}, "CONFIG_ERROR", "config"),
        ({"action": "add", "request": {}, "config": "x"}, "CONFIG_ERROR", "config"),
        ({"action": "add", "request": {}, "version": "9.9.9"}, "WEBTOOL_NOT_FOUND", "calc@9.9.9"),
    ],
)
async def test_bad_requests_get_the_error_envelope(snapshot, body, code, fragment):
    status, got_code, message = _error(await call(snapshot, body))
    assert got_code == code
    assert fragment in message
    assert status in (400, 404)


async def test_a_body_that_is_not_an_object_is_a_schema_error(snapshot):
    assert _error(await call(snapshot, "hello"))[:2] == (400, "SCHEMA_ERROR")


async def test_a_tool_error_is_reported_with_its_message(everything):
    status, code, message = _error(await call(everything, {"action": "divide", "request": {}}))
    assert (status, code, message) == (422, "TOOL_ERROR", "Cannot divide by zero")


async def test_a_server_side_failure_is_internal_error_without_details(everything):
    status, code, message = _error(await call(everything, {"action": "crash", "request": {}}))
    assert (status, code, message) == (500, "INTERNAL_ERROR", "Internal error")


def test_not_found_and_rate_limit_envelopes():
    assert not_found("calc", "1.0.0") == (
        404,
        {
            "status": "error",
            "error": {"code": "WEBTOOL_NOT_FOUND", "message": "No webtool calc@1.0.0"},
        },
    )
    status, body = rate_limited(30)
    assert (
        status == 429 and body["error"]["code"] == "RATE_LIMIT" and "30" in body["error"]["message"]
    )


def test_the_requested_version_is_read_from_the_body():
    assert requested_version({"version": "1.2.3"}) == "1.2.3"
    assert requested_version({"version": ""}) is None
    assert requested_version({}) is None
    assert requested_version("x") is None
