"""The Celery broker on a service of its own: RabbitMQ (`CELERY_BROKER_URL=amqp://...`) while the
platform's state stays in Redis. A real uvicorn and a real Celery worker both use the broker;
an MCP task started over HTTP is run by the worker, and the call log's rows, buffered in Redis,
are drained into Postgres by a drain sent through RabbitMQ.

Each test gets a vhost of its own on the machine's RabbitMQ (`rabbitmqctl add_vhost`), deleted
afterwards, so no other queue on that RabbitMQ is read or written."""

import shutil
import subprocess
import uuid

import pytest
from kombu import Connection

from accounts.models import ApiKey, User
from activity.models import CallLog
from activity.tasks import drain_call_log
from servers.definition import import_definition
from tests.celery_workers import running_workers, wait_until
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.test_tasks import TASK_TOOLS, Modern, done

RABBITMQ = "amqp://guest:guest@127.0.0.1:5672"


def _rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
def rabbitmq_vhost():
    if shutil.which("rabbitmqctl") is None:
        pytest.skip("RabbitMQ is not installed on this machine")
    vhost = f"getmcp_test_{uuid.uuid4().hex[:10]}"
    _rabbitmqctl("add_vhost", vhost)
    try:
        _rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
        yield f"{RABBITMQ}/{vhost}"
    finally:
        _rabbitmqctl("delete_vhost", vhost)


@pytest.fixture
def task_tenant(committed, unique):
    def make():
        user = User.objects.create_user(f"broker-{unique}@example.com", "long enough password 1")
        org = user.personal_organization()
        server = import_definition(server_definition(f"br-{unique}", tools=TASK_TOOLS), org)
        _key, raw = ApiKey.issue(org, "test key")
        return server, raw

    return committed(make)


def test_a_task_runs_and_the_call_log_drains_with_rabbitmq_as_the_broker(
    live_database, rabbitmq_vhost, task_tenant, committed, tmp_path
):
    server, raw = task_tenant
    broker = {"CELERY_BROKER_URL": rabbitmq_vhost, "CALL_LOG_FLUSH_SECONDS": "0.2"}
    web = LiveServer(live_database, extra_env=broker)
    try:
        with running_workers(tmp_path) as start:
            worker = start(env=broker)
            assert f"transport:   {rabbitmq_vhost.replace('guest:guest', 'guest:**')}" in (
                worker.log()
            )
            client = Modern(web.mcp_url(server.slug), raw)
            created = client.result("tools/call", {"name": "quick", "arguments": {"label": "r"}})
            assert created["resultType"] == "task"
            task = client.poll(created["taskId"], done)
            assert task["status"] == "completed", task
            assert task["result"]["content"] == [{"type": "text", "text": "quick r"}]
            assert "mcptasks.run_tool" in worker.log()

            # The rows wait in Redis until a drain, sent through RabbitMQ, stores them.
            def drained() -> bool:
                with Connection(rabbitmq_vhost) as connection:
                    drain_call_log.apply_async(connection=connection)
                rows = committed(
                    lambda: CallLog.objects.filter(server_id=server.id, method="tools/call")
                )
                return committed(rows.exists)

            wait_until(drained, timeout=30, interval=0.5, what="the call log to drain")
            assert "activity.tasks.drain_call_log" in worker.log()
            client.http.close()
    finally:
        web.stop()
