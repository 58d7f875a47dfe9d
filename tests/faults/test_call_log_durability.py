"""The call log loses no row it acknowledged: through a Postgres outage, a Redis restart and a
web process's SIGTERM, against a live server, a real Celery worker draining, and private
Postgres and (append-only) Redis instances."""

import os
import signal
import time

from activity import stream

from .harness import answer_of, mcp_call, seed_tenant, wait_until

DRAIN = "from activity.tasks import drain_call_log\ndrain_call_log.delay()"
STORED = """
from activity.models import CallLog
from activity import stream
from infra.redis import sync_client
calls = CallLog.objects.filter(method="tools/call", outcome="ok")
result = {
    "rows": calls.count(),
    "uids": calls.values("uid").distinct().count(),
    "waiting": stream.waiting(sync_client()),
}
"""


class Tenant:
    def __init__(self, private_django, database_url, redis_url):
        self.private_django = private_django
        self.database_url = database_url
        self.redis_url = redis_url
        self.seeded = seed_tenant(database_url=database_url, redis_url=redis_url)

    def script(self, code):
        return self.private_django(code, database_url=self.database_url, redis_url=self.redis_url)

    def call(self, server, count: int) -> int:
        """Make `count` successful tools/call requests. A request refused just after a fault
        (a stale pooled connection: issue 9's other half) is not acknowledged, so it is tried
        again and its error row is not counted."""
        answered = failed = 0
        while answered < count:
            answer = answer_of(mcp_call(server.url, self.seeded["slug"], self.seeded["key"]))
            if "result" in answer:
                assert answer["result"]["content"][0]["text"] == "You said hi", answer
                answered += 1
            else:
                failed += 1
                assert failed <= 5, answer
        return count

    def stored(self) -> dict:
        return self.script(STORED)

    def wait_until_stored(self, expected: int, timeout: float = 30.0) -> dict:
        """Ask the worker to drain until `expected` rows are in Postgres and none wait."""

        def done():
            self.script(DRAIN)
            state = self.stored()
            return state if state["rows"] >= expected and state["waiting"] == 0 else None

        return wait_until(done, timeout=timeout, interval=0.5, what=f"{expected} stored rows")


def pushed(fault_redis, count: int) -> None:
    """Wait until `count` rows wait in Redis (read there: Postgres may be down)."""
    wait_until(
        lambda: stream.waiting(fault_redis.client()) >= count,
        timeout=15,
        what=f"{count} rows pushed to Redis",
    )


def services(fault_database, fault_redis, private_django):
    return Tenant(private_django, fault_database, fault_redis.url())


def test_no_row_is_lost_when_postgres_is_down_while_calls_are_made_and_drained(
    fault_postgres, fault_database, fault_redis, start_server, start_worker, private_django
):
    tenant = services(fault_database, fault_redis, private_django)
    server = start_server(database_url=fault_database, redis_url=fault_redis.url())
    start_worker(database_url=fault_database, redis_url=fault_redis.url())
    made = tenant.call(server, 10)
    tenant.wait_until_stored(made)

    fault_postgres.stop(mode="immediate")
    try:
        made += tenant.call(server, 40)
        pushed(fault_redis, 40)  # every row has reached Redis
        for _ in range(3):  # drains that fail: the worker meets a database that is gone
            tenant.script(DRAIN)
            # Deliberate: paced drain attempts while Postgres is gone are the fault exercised;
            # nothing is awaited (whether each one ran or not, no row may be lost).
            time.sleep(0.5)
    finally:
        fault_postgres.start()

    state = tenant.wait_until_stored(made)
    print(f"\nPostgres outage: {made} calls acknowledged, {state['rows']} stored")
    assert state == {"rows": made, "uids": made, "waiting": 0}


def test_no_row_is_lost_when_an_append_only_redis_restarts_or_is_killed(
    fault_database, fault_redis, start_server, start_worker, private_django
):
    tenant = services(fault_database, fault_redis, private_django)
    server = start_server(database_url=fault_database, redis_url=fault_redis.url())
    made = tenant.call(server, 20)
    pushed(fault_redis, 20)  # pushed to Redis, not drained: nothing consumes the queue yet
    assert tenant.stored()["waiting"] == 20

    fault_redis.restart()
    made += tenant.call(server, 20)
    pushed(fault_redis, 40)
    fault_redis.kill()
    fault_redis.start()
    made += tenant.call(server, 5)

    start_worker(database_url=fault_database, redis_url=fault_redis.url())
    state = tenant.wait_until_stored(made)
    print(f"\nRedis restart and kill -9: {made} calls acknowledged, {state['rows']} stored")
    assert state == {"rows": made, "uids": made, "waiting": 0}


def test_no_row_is_lost_when_a_web_process_is_stopped_with_sigterm(
    fault_database, fault_redis, start_server, start_worker, private_django
):
    tenant = services(fault_database, fault_redis, private_django)
    # A flush interval far longer than the test: only the shutdown can push these rows.
    server = start_server(
        database_url=fault_database,
        redis_url=fault_redis.url(),
        extra_env={"CALL_LOG_FLUSH_SECONDS": "600"},
    )
    made = tenant.call(server, 30)
    assert tenant.stored()["waiting"] == 0  # still in the web process's buffer

    os.kill(server.process.pid, signal.SIGTERM)
    server.process.wait(15)  # uvicorn shuts down in order, then re-raises the signal

    start_worker(database_url=fault_database, redis_url=fault_redis.url())
    state = tenant.wait_until_stored(made)
    print(f"\nweb SIGTERM: {made} calls acknowledged, {state['rows']} stored")
    assert state == {"rows": made, "uids": made, "waiting": 0}


def test_a_sigkill_loses_nothing_pushed_by_the_flush_interval(
    fault_database, fault_redis, start_server, start_worker, private_django
):
    tenant = services(fault_database, fault_redis, private_django)
    server = start_server(
        database_url=fault_database,
        redis_url=fault_redis.url(),
        extra_env={"CALL_LOG_FLUSH_SECONDS": "0.2"},
    )
    made = tenant.call(server, 15)
    pushed(fault_redis, 15)  # within a flush interval or so
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(10)

    start_worker(database_url=fault_database, redis_url=fault_redis.url())
    state = tenant.wait_until_stored(made)
    assert state == {"rows": made, "uids": made, "waiting": 0}


def test_embedded_mode_stores_its_rows_when_stopped_with_sigterm(
    fault_database, start_server, private_django
):
    # No REDIS_URL: the queue is in the web process's memory, and so is the beat that drains it.
    tenant = Tenant(private_django, fault_database, "")
    server = start_server(
        database_url=fault_database, redis_url="", extra_env={"CALL_LOG_FLUSH_SECONDS": "600"}
    )
    made = tenant.call(server, 12)
    assert tenant.stored()["rows"] == 0

    os.kill(server.process.pid, signal.SIGTERM)
    server.process.wait(15)
    assert tenant.stored() == {"rows": made, "uids": made, "waiting": 0}
