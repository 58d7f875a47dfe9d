from gateway.surfaces.rest import call_tool_rest
from mcp_protocol.context import NullContext


async def test_a_rest_call_returns_the_result(snapshot):
    assert await call_tool_rest(snapshot, "add", {"a": 7, "b": 3}, NullContext()) == (
        200,
        {"result": {"sum": 10}},
    )


async def test_a_text_only_tool_returns_its_text(snapshot):
    status, body = await call_tool_rest(snapshot, "files/echo", {"message": "hi"}, NullContext())
    assert (status, body) == (200, {"result": "You said hi"})


async def test_other_content_comes_back_as_blocks(everything):
    status, body = await call_tool_rest(everything, "picture", {}, NullContext())
    assert status == 200
    assert body["result"] == [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]


async def test_an_unknown_tool_is_404(snapshot):
    assert await call_tool_rest(snapshot, "nope", {}, NullContext()) == (
        404,
        {"error": "Unknown tool: nope"},
    )


async def test_bad_arguments_are_400_with_every_error(snapshot):
    status, body = await call_tool_rest(snapshot, "add", {"a": "x", "c": 1}, NullContext())
    assert status == 400
    assert body["error"] == "Invalid arguments for tool add"
    paths = sorted(error["path"] for error in body["errors"])
    assert paths == ["/", "/", "/a"]
    assert any("'b' is a required property" in e["message"] for e in body["errors"])


async def test_a_body_that_is_not_an_object_is_400(snapshot):
    status, body = await call_tool_rest(snapshot, "add", [1, 2], NullContext())
    assert status == 400 and "JSON object" in body["error"]


async def test_a_tool_error_is_500_with_its_message(everything):
    assert await call_tool_rest(everything, "divide", {}, NullContext()) == (
        500,
        {"error": "Cannot divide by zero"},
    )


async def test_a_json_rpc_error_is_500(everything):
    status, body = await call_tool_rest(everything, "crash", {}, NullContext())
    assert status == 500 and body == {"error": "upstream failed"}


async def test_a_tool_that_needs_a_client_answer_fails_cleanly(everything):
    status, body = await call_tool_rest(everything, "ask", {}, NullContext())
    assert status == 500
    assert "elicitation/create" in body["error"]
