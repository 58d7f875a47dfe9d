"""The workflow `task` step: where a stateless call leaves the request and goes on as a task."""

import pytest

from gateway.endpoint.stateless_context import StatelessContext
from servers.kinds import workflow
from servers.kinds.workflow import StartTask

STEPS = {
    "steps": [
        {"elicit": {"message": "Name?", "requestedSchema": {"type": "object"}, "into": "who"}},
        {"task": {}},
        {"return": {"content": [{"type": "text", "text": "hi {{ who.content.name }}"}]}},
    ]
}


def context(answers) -> StatelessContext:
    ctx = StatelessContext(
        protocol_version="2026-07-28",
        client_capabilities={"elicitation": {}},
        client_info=None,
        credential="key:1",
    )
    ctx.answers = answers
    return ctx


def test_a_task_step_takes_no_fields():
    config = {"steps": [{"task": {"now": True}}]}
    assert workflow.validate_config(config) == [
        "config.steps[0].task: takes no fields (write `- task: {}`)"
    ]
    assert workflow.validate_config({"steps": [{"task": None}]}) == []


async def test_without_an_endpoint_asking_the_step_does_nothing():
    compiled = workflow.compile({"config": STEPS})
    answers = {"who": {"action": "accept", "content": {"name": "Ann"}}}
    result = await workflow.call(compiled, {}, context(answers))
    assert result["content"][0]["text"] == "hi Ann"


async def test_the_step_hands_over_the_answers_the_steps_before_it_used():
    compiled = workflow.compile({"config": STEPS})
    answers = {"who": {"action": "accept", "content": {"name": "Ann"}}, "other": {}}
    ctx = context(answers)

    def start_task():
        raise StartTask(dict(ctx.used_answers))

    ctx.start_task = start_task
    with pytest.raises(StartTask) as started:
        await workflow.call(compiled, {}, ctx)
    assert started.value.answers == {"who": answers["who"]}
