"""The workflow step `task`: where a call may leave the request and go on as a task.

The steps before it run inside the tools/call request (a stateless client answers their
questions through MRTR, as the tasks extension advises for input a task needs up front); the
call becomes a task when it reaches this step, and the task's run finds those answers. Outside
a task-augmented stateless call the step does nothing, so the same workflow also runs inline.
"""

from servers.kinds import workflow


class StartTask(Exception):
    """Raised by the `task` step when the endpoint asked to be told (see servers.endpoint.tasks);
    `answers` are the client's answers the steps before it used."""

    def __init__(self, answers: dict):
        super().__init__("start task")
        self.answers = answers


def _validate_task(body, path):
    if body:
        return [f"{path}: takes no fields (write `- task: {{}}`)"]
    return []


async def _run_task(step, variables, ctx):
    start = getattr(ctx, "start_task", None)
    if start is not None:
        start()


def register() -> None:
    workflow.register_step("task", _validate_task, _run_task)
