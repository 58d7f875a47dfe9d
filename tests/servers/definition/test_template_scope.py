"""Save-time template checks in the definition validator (every save surface uses it)."""

from servers.definition import template_name_problems, validate_definition
from servers.definition.template_scope import declared_arguments


def tool(config: dict, *, kind: str = "static", schema: dict | None = None) -> dict:
    return {
        "slug": "typos",
        "name": "typos",
        "tools": [
            {
                "name": "greet",
                "description": "Greet someone.",
                "inputSchema": schema
                or {"type": "object", "properties": {"name": {"type": "string"}}},
                "kind": kind,
                "config": config,
            }
        ],
    }


GREETING = {"content": [{"type": "text", "text": "hi {{ nmae }}!"}]}


def test_a_typo_in_a_static_tool_is_refused_naming_the_argument_it_meant():
    assert validate_definition(tool(GREETING)) == [
        "tools[0].config.content[0].text: the template reads 'nmae', which is not one of its "
        "arguments (name); did you mean 'name'?"
    ]


def test_the_right_name_passes():
    fixed = {"content": [{"type": "text", "text": "hi {{ name }}!"}]}
    assert validate_definition(tool(fixed)) == []


def test_a_schema_that_takes_any_argument_is_not_checked():
    free = {"type": "object", "properties": {"name": {}}, "additionalProperties": True}
    assert validate_definition(tool(GREETING, schema=free)) == []
    assert declared_arguments({"type": "object"}) is None


def test_an_http_tool_reads_secrets_in_its_request_and_response_variables_in_its_template():
    config = {
        "method": "GET",
        "url": "https://api.example.com/greet",
        "headers": {"Authorization": "Bearer {{ secrets.TOKEN }}", "X-Name": "{{ name }}"},
        "response": {"template": "{{ status }}: {{ response.greeting }} for {{ args.name }}"},
    }
    assert validate_definition(tool(config, kind="http")) == []
    config["response"]["template"] = "{{ reponse.greeting }}"
    [problem] = validate_definition(tool(config, kind="http"))
    assert problem.startswith("tools[0].config.response.template: the template reads 'reponse'")
    assert problem.endswith("did you mean 'response'?")


def test_a_workflow_reads_its_arguments_and_the_answers_of_its_steps():
    config = {
        "steps": [
            {
                "elicit": {
                    "message": "Sure, {{ name }}?",
                    "requestedSchema": {"type": "object", "properties": {}},
                    "into": "answer",
                }
            },
            {"return": {"content": [{"type": "text", "text": "{{ answer.action }} {{ anwser }}"}]}},
        ]
    }
    [problem] = validate_definition(tool(config, kind="workflow"))
    assert problem.startswith("tools[0].config.steps[1].return.content[0].text: ")
    assert "reads 'anwser'" in problem and "did you mean 'answer'?" in problem


def test_a_prompt_message_reads_only_the_prompts_arguments():
    definition = {
        "slug": "typos",
        "name": "typos",
        "prompts": [
            {
                "name": "review",
                "description": "Review code.",
                "arguments": [{"name": "code"}],
                "messages": [{"role": "user", "content": {"type": "text", "text": "{{ cod }}"}}],
            }
        ],
    }
    [problem] = validate_definition(definition)
    assert problem.startswith("prompts[0].messages[0].content.text: the template reads 'cod'")


def test_a_resource_template_text_reads_only_its_uri_variables():
    definition = {
        "slug": "typos",
        "name": "typos",
        "resourceTemplates": [
            {"uriTemplate": "notes://{id}", "name": "note", "text": "{{ id }} {{ idd }}"}
        ],
    }
    [problem] = validate_definition(definition)
    assert "reads 'idd'" in problem and "URI template variables (id)" in problem


def test_the_check_can_be_skipped_and_reported_apart_for_publish_warnings():
    assert validate_definition(tool(GREETING), template_names=False) == []
    assert template_name_problems(tool(GREETING)) == validate_definition(tool(GREETING))
