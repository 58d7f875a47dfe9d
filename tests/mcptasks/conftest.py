import pytest

from infra.redis import sync_client
from servers.definition import import_definition
from servers.publishing import publish
from servers.snapshot import clear_cache, compile_definition
from tests.celery_workers import running_workers, wait_until

__all__ = ["wait_until"]


def tasks_definition(slug="tasks-demo"):
    optional = {"taskSupport": "optional"}
    return {
        "slug": slug,
        "name": slug,
        "tools": [
            {
                "name": "greet",
                "description": "Say hello.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "execution": optional,
                "config": {"content": [{"type": "text", "text": "Hello, {{ name }}!"}]},
            },
            {
                "name": "slow_compute",
                "description": "Think for a while.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"ms": {"type": "integer"}, "label": {"type": "string"}},
                },
                "execution": optional,
                "kind": "workflow",
                "config": {
                    "steps": [
                        {"progress": {"progress": 0, "total": 1, "message": "starting"}},
                        {"log": {"level": "info", "message": "computing {{ label }}"}},
                        {"sleep": {"ms": "{{ ms }}"}},
                        {"return": {"content": [{"type": "text", "text": "done {{ label }}"}]}},
                    ]
                },
            },
            {
                "name": "confirm_delete",
                "description": "Ask before deleting.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {
                    "steps": [
                        {
                            "elicit": {
                                "message": "Delete it?",
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"ok": {"type": "boolean"}},
                                },
                                "into": "confirm",
                            }
                        },
                        {
                            "return": {
                                "content": [{"type": "text", "text": "answer={{ confirm.action }}"}]
                            }
                        },
                    ]
                },
            },
            {
                "name": "protocol_error_job",
                "description": "Fails with a JSON-RPC error.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {"steps": [{"fail": {"message": "upstream exploded", "code": -32603}}]},
            },
            {
                "name": "failing_job",
                "description": "Fails with a tool error.",
                "inputSchema": {"type": "object"},
                "execution": optional,
                "kind": "workflow",
                "config": {"steps": [{"fail": {"message": "no such file"}}]},
            },
            {
                "name": "inline_only",
                "description": "Never a task.",
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "ok"}]},
            },
        ],
    }


@pytest.fixture
def tasks_server(org, user):
    server = import_definition(tasks_definition(), org, user=user)
    publish(server)
    clear_cache()
    return server


@pytest.fixture
def snapshot(tasks_server):
    return compile_definition(
        tasks_definition(),
        server_id=tasks_server.pk,
        organization_id=tasks_server.organization_id,
        generation="test",
    )


@pytest.fixture(scope="module")
def clean_redis():
    sync_client().flushdb()


@pytest.fixture
def start_worker(django_db_setup, tmp_path):
    with running_workers(tmp_path) as start:
        yield start
