"""MCP tasks on a fault test's private database: a server with the task tools of
tests/mcptasks (`slow_compute` sleeps for `ms`), tasks created through the product's own code in
a Django process, and their state read with psql (quick enough to watch a task of seconds)."""

from .harness import django_script

SEED_TASKS_SERVER = """
from accounts.models import User
from servers.definition import import_definition
from tests.mcptasks.conftest import tasks_definition

user = User.objects.create_user("tasks-owner@example.com", "long enough password 1")
server = import_definition(tasks_definition("SLUG"), user.personal_organization())
result = server.pk
"""

CREATE_TASK = """
from servers.models import Server
from servers.snapshot import compile_definition
from tests.mcptasks.conftest import tasks_definition
from mcptasks.lifecycle import create_task

server = Server.objects.get(slug="SLUG")
snapshot = compile_definition(
    tasks_definition("SLUG"), server_id=server.pk,
    organization_id=server.organization_id, generation="test",
)
result = create_task(snapshot, TOOL, ARGUMENTS, "key:1", None).pk
"""


class Tasks:
    SLUG = "fault-tasks"

    def __init__(self, postgres, database_url: str, redis_url: str):
        self.postgres, self.database = postgres, database_url.rsplit("/", 1)[1]
        self.urls = {"database_url": database_url, "redis_url": redis_url}
        django_script(SEED_TASKS_SERVER.replace("SLUG", self.SLUG), **self.urls)

    def create(self, tool: str, arguments: dict) -> str:
        """A task of `tool`, dispatched to the workers (one must be alive: its heartbeat)."""
        code = CREATE_TASK.replace("SLUG", self.SLUG)
        code = code.replace("TOOL", repr(tool)).replace("ARGUMENTS", repr(arguments))
        return django_script(code, **self.urls)

    def state(self, task_id: str) -> tuple[str, int]:
        """(status, attempts)"""
        row = self.postgres.psql(
            f"SELECT status, attempts FROM mcptasks_task WHERE id = '{task_id}'", self.database
        )
        status, attempts = row.split("|")
        return status, int(attempts)

    def timing(self, task_id: str) -> tuple[float, float]:
        """(created at, epoch seconds; seconds from creation to its last change)"""
        row = self.postgres.psql(
            "SELECT extract(epoch FROM created_at), extract(epoch FROM updated_at - created_at) "
            f"FROM mcptasks_task WHERE id = '{task_id}'",
            self.database,
        )
        created, took = row.split("|")
        return float(created), float(took)
