"""A Redis restart while a Celery worker holds a message (issue 30): the worker stays up, the task
it was running ends with a status, and the message is acknowledged rather than left to come back.

The worker runs Celery's prefork pool, as `make run` and the compose file start it: its main
process runs kombu's event loop, where a lost connection closes the channel that holds the
unacknowledged message (infra/broker.py says what went wrong there).
"""

import pytest

from .harness import wait_until
from .tasks import Tasks


@pytest.mark.parametrize("how", ["restart", "kill"])
def test_a_redis_restart_with_a_task_in_flight_leaves_the_worker_running(
    fault_postgres, fault_database, fault_redis, start_worker, how
):
    tasks = Tasks(fault_postgres, fault_database, fault_redis.url(0))
    worker = start_worker(
        database_url=fault_database, redis_url=fault_redis.url(0), prefork=True, concurrency=2
    )
    task_id = tasks.create("slow_compute", {"ms": 15000, "label": "in flight"})
    wait_until(lambda: tasks.state(task_id) == ("working", 1), timeout=30, what="the task to start")
    assert fault_redis.client().hlen("unacked") == 1  # the worker holds its message

    if how == "kill":  # kill -9: back with what its append-only file holds
        fault_redis.kill()
        fault_redis.start()
    else:  # a clean shutdown and start, as `docker compose restart redis` does
        fault_redis.restart()

    wait_until(
        lambda: tasks.state(task_id)[0] == "completed",
        timeout=60,
        what=f"the task in flight to complete\n{worker.log()}",
    )
    # Acknowledged once Redis was back: not left in the unacked index, to be delivered again
    # after the visibility timeout.
    wait_until(
        lambda: fault_redis.client().hlen("unacked") == 0,
        timeout=30,
        what=f"the task's message to be acknowledged\n{worker.log()}",
    )
    assert worker.process.poll() is None, worker.log()
    assert "Unrecoverable error" not in worker.log()
    # And it consumes again: a new task runs to its end.
    after = tasks.create("greet", {"name": "again"})
    wait_until(
        lambda: tasks.state(after)[0] == "completed",
        timeout=60,
        what=f"a task sent after the restart\n{worker.log()}",
    )
    assert tasks.state(task_id) == ("completed", 1)  # it ran once, to its end
