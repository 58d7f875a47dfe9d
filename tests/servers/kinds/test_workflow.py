import pytest

from mcp_protocol.context import NullContext, RequestContext
from mcp_protocol.errors import InputRequired, McpError, ToolError
from servers.kinds import workflow


def compiled(*steps):
    config = {"steps": list(steps)}
    assert workflow.validate_config(config) == []
    return workflow.compile({"config": config})


async def test_log_progress_and_sleep_reach_the_context_in_order(scripted):
    ctx = scripted()
    result = await workflow.call(
        compiled(
            {"log": {"level": "info", "message": "Started {{ name }}", "logger": "wf"}},
            {"progress": {"progress": "{{ step * 50 }}", "total": 100, "message": "half"}},
            {"sleep": {"ms": 50}},
            {"return": {"content": [{"type": "text", "text": "done {{ name }}"}]}},
        ),
        {"name": "job", "step": 1},
        ctx,
    )
    assert ctx.events == [
        ("log", "info", "Started job", "wf"),
        ("progress", 50.0, 100.0, "half"),
        ("sleep", 0.05),
    ]
    assert result == {"content": [{"type": "text", "text": "done job"}]}


async def test_elicit_sample_and_roots_ask_the_client_and_store_the_answers(scripted):
    answers = {
        "answer": {"action": "accept", "content": {"username": "ann"}},
        "reply": {"role": "assistant", "content": {"type": "text", "text": "Paris"}},
        "step2": {"roots": [{"uri": "file:///home"}]},
    }
    ctx = scripted(answers)
    steps = compiled(
        {
            "elicit": {
                "message": "Who? {{ q }}",
                "requestedSchema": {"type": "object"},
                "into": "answer",
            }
        },
        {
            "sample": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "{{ q }}"}}],
                "maxTokens": 100,
                "systemPrompt": "Be brief",
                "into": "reply",
            }
        },
        {"roots": {}},
        {
            "return": {
                "content": [
                    {
                        "type": "text",
                        "text": "{{ answer.content.username }} / {{ reply.content.text }}",
                    }
                ],
                "structuredContent": {
                    "roots": "{{ step2.roots | length }}",
                    "action": "{{ answer.action }}",
                },
            }
        },
    )
    result = await workflow.call(steps, {"q": "capital?"}, ctx)
    assert ctx.events == [
        (
            "request",
            "answer",
            "elicitation/create",
            {"message": "Who? capital?", "requestedSchema": {"type": "object"}},
        ),
        (
            "request",
            "reply",
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "capital?"}}],
                "maxTokens": 100,
                "systemPrompt": "Be brief",
            },
        ),
        ("request", "step2", "roots/list", {}),
    ]
    assert result == {
        "content": [{"type": "text", "text": "ann / Paris"}],
        "structuredContent": {"roots": 1, "action": "accept"},
    }


async def test_the_same_answers_give_the_same_requests_and_result(scripted):
    steps = compiled(
        {"elicit": {"message": "Name?", "requestedSchema": {"type": "object"}, "into": "a"}},
        {
            "elicit": {
                "message": "Color for {{ a.content.name }}?",
                "requestedSchema": {"type": "object"},
            }
        },
        {
            "return": {
                "content": [
                    {"type": "text", "text": "{{ a.content.name }} likes {{ step1.content.c }}"}
                ]
            }
        },
    )
    answers = {
        "a": {"action": "accept", "content": {"name": "Bo"}},
        "step1": {"action": "accept", "content": {"c": "red"}},
    }
    first, second = scripted(answers), scripted(answers)
    assert await workflow.call(steps, {}, first) == await workflow.call(steps, {}, second)
    assert first.events == second.events
    assert first.events[1][3]["message"] == "Color for Bo?"


async def test_a_missing_answer_stops_the_run_with_the_contexts_error(scripted):
    ctx = scripted({})
    steps = compiled({"roots": {"into": "r"}}, {"log": {"message": "never"}})
    with pytest.raises(McpError):
        await workflow.call(steps, {}, ctx)
    assert [event[0] for event in ctx.events] == ["request"]


async def test_fail_without_a_code_is_a_tool_error():
    with pytest.raises(ToolError, match="bad input x"):
        await workflow.call(
            compiled({"fail": {"message": "bad input {{ v }}"}}), {"v": "x"}, NullContext()
        )


async def test_fail_with_a_code_is_a_json_rpc_error():
    steps = compiled({"fail": {"message": "nope", "code": -32603, "data": {"why": "{{ v }}"}}})
    with pytest.raises(McpError) as raised:
        await workflow.call(steps, {"v": 1}, NullContext())
    assert (raised.value.code, raised.value.message, raised.value.data) == (
        -32603,
        "nope",
        {"why": 1},
    )


async def test_steps_after_return_do_not_run():
    ctx = NullContext()
    steps = compiled({"return": {"content": []}}, {"log": {"message": "after"}})
    assert await workflow.call(steps, {}, ctx) == {"content": []}
    assert ctx.logs == []


async def test_no_return_step_gives_an_empty_text_result():
    ctx = NullContext()
    assert await workflow.call(compiled({"log": {"message": "m"}}), {}, ctx) == {
        "content": [{"type": "text", "text": ""}]
    }
    assert ctx.logs == [{"level": "info", "data": "m", "logger": None}]


async def test_a_progress_template_that_is_not_a_number_is_a_tool_error():
    with pytest.raises(ToolError, match="progress must be a number"):
        await workflow.call(
            compiled({"progress": {"progress": "{{ x }}"}}), {"x": "lots"}, NullContext()
        )


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            [{"elicit": {"message": "m", "requestedSchema": {}, "into": "bad name"}}],
            "config.steps[0].elicit.into: must be a variable name",
        ),
        (
            [{"log": {}}, {"elicit": {"message": "m"}}],
            "config.steps[1].elicit.requestedSchema: required",
        ),
        ([{"log": {"message": "m", "level": "loud"}}], "config.steps[0].log.level: must be one of"),
        ([{"sample": {"messages": []}}], "config.steps[0].sample.maxTokens: required"),
        ([{"sleep": {"ms": -1}}], "config.steps[0].sleep.ms: must be a number"),
        ([{"progress": {}}], "config.steps[0].progress.progress: required"),
        (
            [{"fail": {"message": "m", "code": "x"}}],
            "config.steps[0].fail.code: must be an integer",
        ),
        (
            [{"return": {"content": [{"type": "text"}]}}],
            "config.steps[0].return.content[0].text: required",
        ),
        ([{"teleport": {}}], "config.steps[0]: unknown step 'teleport'"),
        (
            [{"log": {"message": "a"}, "sleep": {"ms": 1}}],
            "config.steps[0]: must be a mapping with exactly one",
        ),
        (
            [{"roots": {"into": "r"}}, {"roots": {"into": "r"}}],
            "config.steps[1].roots.into: 'r' is already used",
        ),
        ([{"log": {"message": "{% if %}"}}], "config.steps[0].log: Template syntax error"),
    ],
)
def test_validation_names_the_offending_step_field(steps, message):
    errors = workflow.validate_config({"steps": steps})
    assert any(message in error for error in errors), errors


def test_steps_are_required():
    assert workflow.validate_config({}) == ["config.steps: required, a list of steps"]


async def test_another_module_can_register_a_step_type():
    seen = []

    def validate(body, path):
        return [] if "url" in body else [f"{path}.url: required"]

    async def run(step, variables, ctx):
        body = step.render(variables)
        seen.append(body["url"])
        variables[step.key] = {"status": 200}

    workflow.STEP_TYPES["fetchlike"] = workflow.StepType(validate, run)
    try:
        assert workflow.validate_config({"steps": [{"fetchlike": {}}]}) == [
            "config.steps[0].fetchlike.url: required"
        ]
        steps = compiled(
            {"fetchlike": {"url": "https://x/{{ id }}", "into": "resp"}},
            {"return": {"content": [{"type": "text", "text": "{{ resp.status }}"}]}},
        )
        result = await workflow.call(steps, {"id": 9}, NullContext())
    finally:
        del workflow.STEP_TYPES["fetchlike"]
    assert seen == ["https://x/9"]
    assert result["content"][0]["text"] == "200"


class StatelessClient(RequestContext):
    """Answers from `inputResponses` or asks for what is missing, like the 2026 stateless era."""

    protocol_version = "2026-07-28"
    client_capabilities: dict = {}
    client_info = None
    credential = "anon"

    def __init__(self, responses):
        self.responses = responses

    async def log(self, level, data, logger=None):
        pass

    async def progress(self, progress, total=None, message=None):
        pass

    async def request(self, key, method, params):
        if key in self.responses:
            return self.responses[key]
        raise InputRequired({key: {"method": method, "params": params}}, request_state="s1")

    async def sleep(self, seconds):
        pass


ALL_STEPS = (
    {
        "all": {
            "steps": [
                {
                    "elicit": {
                        "message": "Name?",
                        "requestedSchema": {"type": "object"},
                        "into": "user_name",
                    }
                },
                {"sample": {"messages": [], "maxTokens": 50, "into": "greeting"}},
                {"roots": {"into": "client_roots"}},
            ]
        }
    },
    {
        "return": {
            "content": [
                {
                    "type": "text",
                    "text": "{{ user_name.content.name }} {{ greeting.content.text }} {{ client_roots.roots | length }}",
                }
            ]
        }
    },
)


async def test_all_asks_for_every_missing_answer_in_one_round():
    steps = compiled(*ALL_STEPS)
    with pytest.raises(InputRequired) as raised:
        await workflow.call(steps, {}, StatelessClient({"greeting": {"content": {"text": "hi"}}}))
    assert set(raised.value.input_requests) == {"user_name", "client_roots"}
    assert raised.value.input_requests["user_name"]["method"] == "elicitation/create"
    assert raised.value.request_state == "s1"


async def test_all_goes_on_once_every_answer_is_there():
    answers = {
        "user_name": {"action": "accept", "content": {"name": "Ann"}},
        "greeting": {"content": {"type": "text", "text": "hello"}},
        "client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    result = await workflow.call(compiled(*ALL_STEPS), {}, StatelessClient(answers))
    assert result["content"][0]["text"] == "Ann hello 2"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "config.steps[0].all.steps: required"),
        (
            {"steps": [{"log": {"message": "m"}}]},
            "config.steps[0].all.steps[0]: must be one of elicit",
        ),
        (
            {"steps": [{"sample": {"messages": []}}]},
            "config.steps[0].all.steps[0].sample.maxTokens: required",
        ),
        (
            {"steps": [{"roots": {"into": "r"}}, {"roots": {"into": "r"}}]},
            "config.steps[0].all.steps[1].roots.into: 'r' is already used",
        ),
    ],
)
def test_all_validates_its_inner_steps(body, message):
    errors = workflow.validate_config({"steps": [{"all": body}]})
    assert any(message in error for error in errors), errors


async def test_requests_without_into_are_keyed_by_their_position(scripted):
    ctx = scripted({"step1": {"roots": []}, "step2_0": {"roots": []}})
    steps = compiled(
        {"log": {"message": "m"}},
        {"roots": {}},
        {"all": {"steps": [{"roots": {}}]}},
    )
    await workflow.call(steps, {}, ctx)
    assert [event[1] for event in ctx.events if event[0] == "request"] == ["step1", "step2_0"]


def test_a_registered_step_compiles_its_extra_from_the_body_and_the_tool_definition():
    seen = []

    def compile_extra(body, tool_def):
        seen.append((body, tool_def["name"], tool_def["_server"]))
        return "precompiled"

    async def run(step, variables, ctx):
        variables[step.key] = step.extra

    workflow.STEP_TYPES["probe"] = workflow.StepType(lambda body, path: [], run, compile_extra)
    try:
        steps = workflow.compile(
            {"name": "t", "_server": {"id": 1}, "config": {"steps": [{"probe": {"x": 1}}]}}
        )
    finally:
        del workflow.STEP_TYPES["probe"]
    assert steps[0].extra == "precompiled"
    assert seen == [({"x": 1}, "t", {"id": 1})]


async def test_notify_tells_the_servers_listeners_what_changed():
    import orjson

    from infra import keys
    from infra.redis import sync_client

    config = {
        "steps": [
            {"notify": {"lists": ["tools", "prompts"], "resources": ["note://{{ id }}"]}},
            {"return": {"content": [{"type": "text", "text": "told"}]}},
        ]
    }
    assert workflow.validate_config(config) == []
    steps = workflow.compile({"config": config, "_server": {"id": 987654}})
    pubsub = sync_client().pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.server_events(987654))
    try:
        result = await workflow.call(steps, {"id": "7"}, NullContext())
        assert result["content"][0]["text"] == "told"
        seen = []
        for _ in range(30):
            message = pubsub.get_message(timeout=0.2)
            if message:
                seen.append(orjson.loads(message["data"]))
            if len(seen) == 3:
                break
    finally:
        pubsub.close()
    assert seen == [
        {"method": "notifications/tools/list_changed", "params": {}},
        {"method": "notifications/prompts/list_changed", "params": {}},
        {"method": "notifications/resources/updated", "params": {"uri": "note://7"}},
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "name at least one of lists or resources"),
        ({"lists": ["widgets"]}, "lists: must be a list of tools, prompts, resources"),
        ({"resources": "note://x"}, "resources: must be a list of resource URIs"),
        ({"lists": ["tools"], "loud": True}, "loud: unknown field"),
    ],
)
def test_notify_validates_what_it_names(body, message):
    errors = workflow.validate_config({"steps": [{"notify": body}]})
    assert any(message in error for error in errors), errors
