import json

import schemathesis
from openapi_spec_validator import validate

from gateway.surfaces.openapi import openapi_document
from gateway.surfaces.rest import call_tool_rest
from mcp_protocol.context import NullContext

from .conftest import make_snapshot


def test_the_document_is_valid_openapi_3_1(everything):
    document = openapi_document(everything, "https://getmcp.test/mcp/calc")
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"] == {
        "title": "Calculator <b>&</b> friends",
        "version": "2.1.0",
        "description": "Use <script>alert(1)</script> carefully.",
    }
    assert document["servers"] == [{"url": "https://getmcp.test/mcp/calc"}]


def test_each_tool_is_a_post_with_its_input_schema_as_the_body(snapshot):
    document = openapi_document(snapshot, "https://getmcp.test/mcp/calc")
    assert set(document["paths"]) == {"/tools/add", "/tools/files/echo"}
    add = document["paths"]["/tools/add"]["post"]
    assert add["operationId"] == "add"
    assert add["summary"] == "Add" and add["description"] == "Add two numbers together."
    assert add["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/add_input"
    }
    assert set(add["responses"]) == {"200", "400", "404", "500"}
    echo = document["paths"]["/tools/files/echo"]["post"]
    assert echo["operationId"] == "files_echo"


def test_local_refs_of_a_tool_schema_still_resolve_inside_the_document(snapshot):
    schemas = openapi_document(snapshot, "https://x.test/mcp/calc")["components"]["schemas"]
    assert schemas["add_input"]["properties"]["a"] == {
        "$ref": "#/components/schemas/add_input/$defs/number"
    }
    assert schemas["add_input"]["$defs"]["number"]["type"] == "number"


def test_the_result_schema_is_the_output_schema_when_there_is_one(snapshot):
    document = openapi_document(snapshot, "https://x.test/mcp/calc")
    ok = document["paths"]["/tools/add"]["post"]["responses"]["200"]
    result = ok["content"]["application/json"]["schema"]["properties"]["result"]
    assert result == {"$ref": "#/components/schemas/add_output"}


def test_a_server_with_keys_declares_bearer_auth():
    document = openapi_document(make_snapshot(auth="api_key"), "https://x.test/mcp/calc")
    validate(document)
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert document["security"] == [{"apiKey": []}]
    assert "401" in document["paths"]["/tools/add"]["post"]["responses"]


def test_operation_ids_stay_unique_when_names_sanitize_alike():
    tools = [
        {
            "name": name,
            "description": "d",
            "inputSchema": {"type": "object"},
            "config": {"content": [{"type": "text", "text": "ok"}]},
        }
        for name in ("a.b", "a_b", "a/b")
    ]
    snapshot = make_snapshot(tools=tools)
    document = openapi_document(snapshot, "https://x.test/mcp/s")
    validate(document)
    ids = [op["post"]["operationId"] for op in document["paths"].values()]
    assert ids == ["a_b", "a_b_2", "a_b_3"]


# -- schemathesis: the REST calls, served by a minimal ASGI app over the same functions ----------

SERVED = make_snapshot()


async def rest_app(scope, receive, send):
    """Only what the document describes, answered by gateway.surfaces; stands in for the
    endpoint, which routes /mcp/<slug>/openapi.json and /mcp/<slug>/tools/<name> the same way."""
    assert scope["type"] == "http"
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path, method = scope["path"], scope["method"]
    extra = []
    if path.startswith("/tools/") and method != "POST":
        status, payload = 405, {"error": "Method not allowed"}
        extra = [(b"allow", b"POST")]
    elif path == "/openapi.json" and method == "GET":
        status, payload = 200, openapi_document(SERVED, "/")
    elif path.startswith("/tools/") and method == "POST":
        try:
            arguments = json.loads(body or b"{}")
        except ValueError:
            status, payload = 400, {"error": "The request body must be JSON"}
        else:
            name = path[len("/tools/") :]
            status, payload = await call_tool_rest(SERVED, name, arguments, NullContext())
    else:
        status, payload = 404, {"error": "Not found"}
    data = json.dumps(payload).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


schema = schemathesis.openapi.from_asgi("/openapi.json", rest_app)


@schema.parametrize()
def test_the_rest_calls_conform_to_the_document(case):
    case.call_and_validate()
