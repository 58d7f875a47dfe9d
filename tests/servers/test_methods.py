import orjson
import pytest

from mcp_protocol.context import NullContext
from mcp_protocol.errors import McpError
from mcp_protocol.pagination import encode_cursor
from servers.methods import METHODS, call_method
from servers.snapshot import compile_definition

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def tool(name, config, kind="static", **extra):
    return {
        "name": name,
        "description": f"{name}.",
        "inputSchema": {"type": "object"},
        "kind": kind,
        "config": config,
        **extra,
    }


DEFINITION = {
    "slug": "everything",
    "name": "everything",
    "version": "1.0.0",
    "tools": [
        tool(
            "test_simple_text",
            {"content": [{"type": "text", "text": "This is a simple text response for testing."}]},
        ),
        tool(
            "test_error_handling",
            {
                "content": [
                    {"type": "text", "text": "This tool intentionally returns an error for testing"}
                ],
                "isError": True,
            },
        ),
        tool(
            "echo",
            {
                "content": [{"type": "text", "text": "You said {{ message }}"}],
                "structuredContent": {"echo": "{{ message }}"},
            },
            inputSchema={
                "type": "object",
                "properties": {
                    "message": {"type": "string"},
                    "n": {"type": "integer", "minimum": 0},
                },
                "required": ["message"],
            },
            outputSchema={
                "type": "object",
                "properties": {"echo": {"type": "string"}},
                "required": ["echo"],
            },
        ),
        tool(
            "add",
            {
                "content": [{"type": "text", "text": "{{ a + b }}"}],
                "structuredContent": {"sum": "{{ a + b }}"},
            },
            inputSchema={
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            },
            outputSchema={"type": "object", "properties": {"sum": {"type": "number"}}},
        ),
        tool(
            "liar",
            {"content": [], "structuredContent": {"sum": "not a number"}},
            outputSchema={"type": "object", "properties": {"sum": {"type": "number"}}},
        ),
        tool(
            "silent", {"content": [{"type": "text", "text": "x"}]}, outputSchema={"type": "object"}
        ),
        tool("off", {"content": []}, enabled=False),
        tool(
            "schedule",
            {"content": [{"type": "text", "text": "on {{ when }}"}]},
            inputSchema={
                "type": "object",
                "properties": {"when": {"type": "string", "format": "date"}},
            },
        ),
        tool("divide", {"content": [{"type": "text", "text": "{{ 1 / d }}"}]}),
        tool(
            "sampler",
            {
                "steps": [
                    {
                        "sample": {
                            "messages": [
                                {
                                    "role": "user",
                                    "content": {"type": "text", "text": "{{ prompt }}"},
                                }
                            ],
                            "maxTokens": 100,
                            "into": "reply",
                        }
                    },
                    {
                        "return": {
                            "content": [
                                {"type": "text", "text": "LLM response: {{ reply.content.text }}"}
                            ]
                        }
                    },
                ]
            },
            kind="workflow",
        ),
        tool(
            "refuse",
            {"steps": [{"fail": {"message": "nope", "structuredContent": {"why": "x"}}}]},
            kind="workflow",
        ),
        tool(
            "crash", {"steps": [{"fail": {"message": "internal", "code": -32603}}]}, kind="workflow"
        ),
    ],
    "resources": [
        {
            "uri": "test://static-text",
            "name": "static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        },
        {
            "uri": "test://static-binary",
            "name": "static-binary",
            "mimeType": "image/png",
            "blob": PNG,
        },
    ],
    "resourceTemplates": [
        {
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "mimeType": "application/json",
            "text": '{"id":"{{ id }}","templateTest":true,"data":"Data for ID: {{ id }}"}',
            "completions": {"id": ["1", "2", "10"]},
        },
    ],
    "prompts": [
        {
            "name": "test_simple_prompt",
            "description": "Simple.",
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "This is a simple prompt for testing."},
                }
            ],
        },
        {
            "name": "test_prompt_with_arguments",
            "description": "Args.",
            "arguments": [
                {"name": "arg1", "required": True},
                {"name": "arg2", "required": True},
                {"name": "arg3"},
            ],
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Prompt with arguments: arg1='{{ arg1 }}', arg2='{{ arg2 }}'{{ arg3 }}",
                    },
                }
            ],
            "completions": {"arg1": ["Alpha", "alps", "beta"] + [f"a{i}" for i in range(150)]},
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "Res.",
            "arguments": [{"name": "resourceUri", "required": True}],
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "resource",
                        "resource": {
                            "uri": "{{ resourceUri }}",
                            "mimeType": "text/plain",
                            "text": "Embedded resource content for testing.",
                        },
                    },
                },
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Please process the embedded resource above.",
                    },
                },
            ],
        },
        {
            "name": "test_prompt_with_image",
            "description": "Img.",
            "messages": [
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}
            ],
        },
    ],
}


@pytest.fixture(scope="module")
def snapshot():
    return compile_definition(DEFINITION, server_id=1, organization_id=1, generation="1")


async def call(snapshot, method, params=None, ctx=None):
    result = await call_method(snapshot, method, params or {}, ctx or NullContext())
    # Every result goes on the wire as it is.
    assert orjson.loads(orjson.dumps(result)) == result
    return result


async def error_of(awaitable):
    with pytest.raises(McpError) as raised:
        await awaitable
    return raised.value


def test_it_names_the_methods_it_answers():
    assert {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    } == METHODS


async def test_an_unknown_method_is_method_not_found(snapshot):
    error = await error_of(call(snapshot, "logging/setLevel"))
    assert error.code == -32601


# -- tools --------------------------------------------------------------------------------------


async def test_tools_list_shows_the_enabled_tools_without_a_cursor_when_it_fits(snapshot):
    result = await call(snapshot, "tools/list")
    names = [t["name"] for t in result["tools"]]
    assert "off" not in names and names[0] == "test_simple_text"
    assert "nextCursor" not in result


async def test_long_lists_page_by_fifty_with_opaque_cursors():
    many = {
        "slug": "many",
        "name": "many",
        "tools": [tool(f"t{i:03}", {"content": []}) for i in range(120)],
    }
    snapshot = compile_definition(many, server_id=1, organization_id=1, generation="1")
    first = await call(snapshot, "tools/list")
    second = await call(snapshot, "tools/list", {"cursor": first["nextCursor"]})
    third = await call(snapshot, "tools/list", {"cursor": second["nextCursor"]})
    names = [t["name"] for page in (first, second, third) for t in page["tools"]]
    assert names == [f"t{i:03}" for i in range(120)]
    assert len(first["tools"]) == 50 and "nextCursor" not in third


@pytest.mark.parametrize("cursor", ["garbage", 17, encode_cursor(999)])
async def test_a_bad_cursor_is_invalid_params(snapshot, cursor):
    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        error = await error_of(call(snapshot, method, {"cursor": cursor}))
        assert (error.code, error.message) == (-32602, "Invalid cursor")


async def test_an_empty_cursor_is_the_first_page(snapshot):
    assert await call(snapshot, "prompts/list", {"cursor": ""}) == await call(
        snapshot, "prompts/list"
    )


async def test_tools_call_runs_a_static_tool(snapshot):
    assert await call(snapshot, "tools/call", {"name": "test_simple_text"}) == {
        "content": [{"type": "text", "text": "This is a simple text response for testing."}]
    }


async def test_a_tool_may_answer_with_an_error_result(snapshot):
    result = await call(snapshot, "tools/call", {"name": "test_error_handling", "arguments": {}})
    assert result == {
        "content": [
            {"type": "text", "text": "This tool intentionally returns an error for testing"}
        ],
        "isError": True,
    }


@pytest.mark.parametrize("name", ["nope", "off"])
async def test_an_unknown_or_disabled_tool_is_invalid_params(snapshot, name):
    error = await error_of(call(snapshot, "tools/call", {"name": name}))
    assert (error.code, error.message) == (-32602, f"Unknown tool: {name}")


async def test_arguments_that_are_not_an_object_are_invalid_params(snapshot):
    error = await error_of(call(snapshot, "tools/call", {"name": "echo", "arguments": [1]}))
    assert error.code == -32602


async def test_invalid_arguments_come_back_as_a_tool_error_listing_each_problem(snapshot):
    result = await call(snapshot, "tools/call", {"name": "echo", "arguments": {"n": -1}})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "Invalid arguments for tool echo" in text
    assert "- (root): 'message' is a required property" in text
    assert "- n: -1 is less than the minimum of 0" in text


async def test_structured_content_keeps_numbers_and_is_checked_against_the_output_schema(snapshot):
    result = await call(snapshot, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert result == {"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}}
    echo = await call(snapshot, "tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert echo["structuredContent"] == {"echo": "hi"} and "isError" not in echo


async def test_structured_content_that_breaks_the_output_schema_is_a_tool_error(snapshot):
    result = await call(snapshot, "tools/call", {"name": "liar"})
    assert result["isError"] is True
    assert "does not match its outputSchema" in result["content"][0]["text"]
    assert "sum: 'not a number' is not of type 'number'" in result["content"][0]["text"]


async def test_a_tool_with_an_output_schema_must_return_structured_content(snapshot):
    result = await call(snapshot, "tools/call", {"name": "silent"})
    assert result["isError"] is True and "no structuredContent" in result["content"][0]["text"]


async def test_a_template_failure_is_a_tool_error_naming_the_template(snapshot):
    result = await call(snapshot, "tools/call", {"name": "divide", "arguments": {"d": 0}})
    assert result["isError"] is True and "{{ 1 / d }}" in result["content"][0]["text"]


async def test_a_workflow_tool_error_keeps_its_structured_content(snapshot):
    assert await call(snapshot, "tools/call", {"name": "refuse"}) == {
        "content": [{"type": "text", "text": "nope"}],
        "isError": True,
        "structuredContent": {"why": "x"},
    }


async def test_a_workflow_json_rpc_error_propagates(snapshot):
    error = await error_of(call(snapshot, "tools/call", {"name": "crash"}))
    assert (error.code, error.message) == (-32603, "internal")


async def test_a_workflow_asks_the_client_through_the_context(snapshot):
    class Client(NullContext):
        async def request(self, key, method, params):
            self.asked = (key, method, params)
            return {"role": "assistant", "content": {"type": "text", "text": "Paris"}}

    ctx = Client()
    result = await call(
        snapshot, "tools/call", {"name": "sampler", "arguments": {"prompt": "Capital?"}}, ctx
    )
    assert result == {"content": [{"type": "text", "text": "LLM response: Paris"}]}
    assert ctx.asked == (
        "reply",
        "sampling/createMessage",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Capital?"}}],
            "maxTokens": 100,
        },
    )


async def test_a_workflow_whose_caller_cannot_answer_gives_a_tool_error(snapshot):
    result = await call(snapshot, "tools/call", {"name": "sampler", "arguments": {"prompt": "?"}})
    assert result["isError"] is True and "sampling/createMessage" in result["content"][0]["text"]


# -- resources ----------------------------------------------------------------------------------


async def test_resources_list_and_templates_list_show_the_wire_entries(snapshot):
    resources = await call(snapshot, "resources/list")
    assert resources == {
        "resources": [
            {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png"},
        ]
    }
    templates = await call(snapshot, "resources/templates/list")
    assert templates == {
        "resourceTemplates": [
            {
                "uriTemplate": "test://template/{id}/data",
                "name": "template",
                "mimeType": "application/json",
            }
        ]
    }


async def test_reading_a_static_resource_gives_its_text_or_blob(snapshot):
    assert await call(snapshot, "resources/read", {"uri": "test://static-text"}) == {
        "contents": [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ]
    }
    binary = await call(snapshot, "resources/read", {"uri": "test://static-binary"})
    assert binary["contents"][0]["blob"] == PNG


async def test_reading_a_uri_that_matches_a_template_renders_it(snapshot):
    assert await call(snapshot, "resources/read", {"uri": "test://template/123/data"}) == {
        "contents": [
            {
                "uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
            }
        ]
    }


@pytest.mark.parametrize(
    ("version", "code"), [("2025-06-18", -32002), ("2025-11-25", -32002), ("2026-07-28", -32602)]
)
async def test_a_missing_resource_is_not_found_with_the_code_of_the_revision(
    snapshot, version, code
):
    uri = "test://nonexistent-resource-for-conformance-testing"
    error = await error_of(
        call(snapshot, "resources/read", {"uri": uri}, NullContext(protocol_version=version))
    )
    assert (error.code, error.message, error.data) == (code, "Resource not found", {"uri": uri})


async def test_reading_without_a_uri_is_invalid_params(snapshot):
    assert (await error_of(call(snapshot, "resources/read", {}))).code == -32602


# -- prompts ------------------------------------------------------------------------------------


async def test_prompts_list_shows_names_descriptions_and_arguments(snapshot):
    prompts = (await call(snapshot, "prompts/list"))["prompts"]
    assert prompts[0] == {"name": "test_simple_prompt", "description": "Simple."}
    assert prompts[1]["arguments"][0] == {"name": "arg1", "required": True}


async def test_prompts_get_renders_messages_over_the_arguments(snapshot):
    result = await call(
        snapshot,
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "hello", "arg2": "world"}},
    )
    assert result == {
        "description": "Args.",
        "messages": [
            {
                "role": "user",
                "content": {
                    "type": "text",
                    "text": "Prompt with arguments: arg1='hello', arg2='world'",
                },
            }
        ],
    }


async def test_prompts_get_renders_embedded_resources_and_images(snapshot):
    result = await call(
        snapshot,
        "prompts/get",
        {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://x"}},
    )
    assert result["messages"][0]["content"]["resource"] == {
        "uri": "test://x",
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    image = await call(snapshot, "prompts/get", {"name": "test_prompt_with_image"})
    assert image["messages"][0]["content"] == {
        "type": "image",
        "data": PNG,
        "mimeType": "image/png",
    }


async def test_an_unknown_prompt_is_invalid_params(snapshot):
    error = await error_of(call(snapshot, "prompts/get", {"name": "nope"}))
    assert (error.code, error.message) == (-32602, "Unknown prompt: nope")


async def test_a_missing_required_prompt_argument_is_invalid_params_naming_it(snapshot):
    error = await error_of(
        call(
            snapshot,
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}},
        )
    )
    assert error.code == -32602 and "arg2" in error.message


# -- completion ---------------------------------------------------------------------------------


async def test_completion_filters_prompt_argument_values_by_prefix_ignoring_case(snapshot):
    result = await call(
        snapshot,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "AL"},
        },
    )
    assert result == {"completion": {"values": ["Alpha", "alps"], "total": 2, "hasMore": False}}


async def test_completion_returns_at_most_a_hundred_values(snapshot):
    result = await call(
        snapshot,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "a"},
        },
    )
    completion = result["completion"]
    assert len(completion["values"]) == 100 and completion["total"] == 152 and completion["hasMore"]


async def test_completion_of_a_resource_template_variable(snapshot):
    result = await call(
        snapshot,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "1"},
        },
    )
    assert result["completion"]["values"] == ["1", "10"]


async def test_completion_of_an_argument_without_values_is_empty(snapshot):
    result = await call(
        snapshot,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_simple_prompt"},
            "argument": {"name": "x", "value": ""},
        },
    )
    assert result == {"completion": {"values": [], "total": 0, "hasMore": False}}


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": "nope"},
        {"type": "ref/resource", "uri": "test://nope/{x}"},
        {"type": "ref/other"},
    ],
)
async def test_completion_of_an_unknown_reference_is_invalid_params(snapshot, ref):
    error = await error_of(
        call(snapshot, "completion/complete", {"ref": ref, "argument": {"name": "a", "value": ""}})
    )
    assert error.code == -32602


async def test_string_formats_in_the_input_schema_are_checked(snapshot):
    bad = await call(snapshot, "tools/call", {"name": "schedule", "arguments": {"when": "soon"}})
    assert bad["isError"] is True and "- when: 'soon' is not a 'date'" in bad["content"][0]["text"]
    good = await call(
        snapshot, "tools/call", {"name": "schedule", "arguments": {"when": "2026-11-22"}}
    )
    assert good == {"content": [{"type": "text", "text": "on 2026-11-22"}]}


ASKING_PROMPT = {
    "slug": "asking",
    "prompts": [
        {
            "name": "test_input_required_result_prompt",
            "description": "Asks the user for context before it is rendered.",
            "config": {
                "steps": [
                    {
                        "elicit": {
                            "message": "What context should the prompt use?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"context": {"type": "string"}},
                                "required": ["context"],
                            },
                            "into": "user_context",
                        }
                    }
                ]
            },
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Use this context: {{ user_context.content.context }}",
                    },
                }
            ],
        }
    ],
}


async def test_a_prompt_with_steps_asks_before_it_renders():
    from gateway.endpoint.stateless_context import StatelessContext
    from mcp_protocol.errors import InputRequired

    snapshot = compile_definition(ASKING_PROMPT, server_id=1, organization_id=1, generation="1")
    params = {"name": "test_input_required_result_prompt"}

    def context(answers):
        ctx = StatelessContext(
            protocol_version="2026-07-28",
            client_capabilities={"elicitation": {}},
            client_info=None,
            credential="anon",
        )
        ctx.answers = answers
        return ctx

    with pytest.raises(InputRequired) as asked:
        await call_method(snapshot, "prompts/get", params, context({}))
    request = asked.value.input_requests["user_context"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "What context should the prompt use?"

    answer = {"user_context": {"action": "accept", "content": {"context": "tests"}}}
    result = await call_method(snapshot, "prompts/get", params, context(answer))
    assert result["messages"][0]["content"]["text"] == "Use this context: tests"


def test_a_prompt_cannot_end_in_a_return_step():
    definition = orjson.loads(orjson.dumps(ASKING_PROMPT))
    definition["prompts"][0]["config"]["steps"].append({"return": {"content": []}})
    with pytest.raises(ValueError, match=r"prompts\[0\]\.config\.steps\[1\]: a prompt cannot"):
        compile_definition(definition, server_id=1, organization_id=1, generation="1")
