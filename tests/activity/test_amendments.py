"""A task's worker names the connections its run acted through in the row of the call that
submitted the task: through the call-log stream, whichever of the two reaches a drain first."""

import time
import uuid

from activity import amendments, recorder, stream
from activity.drain import drain_call_log
from activity.models import CallLog

TASK = "a-task-id-as-random-as-they-come"


def submitted(org, server, connection: str = "") -> None:
    """The row of the call that submitted TASK, as the gateway records it."""
    recorder.record_call(
        organization_id=org.pk,
        server_id=server.pk,
        method="tools/call",
        tool="my_items",
        connection=connection,
        uid=amendments.task_call_uid(TASK),
    )


def connection_of_row() -> str:
    return CallLog.objects.get(uid=amendments.task_call_uid(TASK)).connection


def test_a_row_and_its_amendment_drained_together_name_the_connection(call_queue, org, server):
    # The worker's push may come first: the drain stores the batch's rows before amending them.
    amendments.name_connections(task_id=TASK, connections=("corp",))
    submitted(org, server)
    recorder.flush()

    assert drain_call_log() == 1
    assert connection_of_row() == "corp"
    assert stream.waiting(call_queue) == 0


def test_an_amendment_drained_before_its_row_waits_for_it(call_queue, org, server):
    amendments.name_connections(task_id=TASK, connections=("corp",))
    recorder.flush()
    assert drain_call_log() == 0
    assert stream.waiting(call_queue) == 1  # pending, read again by the next drain

    submitted(org, server)
    recorder.flush()
    assert drain_call_log() == 1
    assert connection_of_row() == "corp"
    assert stream.waiting(call_queue) == 0


def test_an_amendment_whose_row_never_came_is_dropped_after_its_patience(
    call_queue, org, monkeypatch
):
    amendments.name_connections(task_id=TASK, connections=("corp",))
    recorder.flush()
    drain_call_log()
    assert stream.waiting(call_queue) == 1

    later = time.time() + amendments.PATIENCE_SECONDS + 1
    monkeypatch.setattr(amendments.time, "time", lambda: later)
    drain_call_log()
    assert stream.waiting(call_queue) == 0


def test_names_the_row_has_already_are_kept_and_new_ones_follow(call_queue, org, server):
    submitted(org, server, connection="slack (shared)")
    recorder.flush()
    drain_call_log()
    amendments.name_connections(task_id=TASK, connections=("corp", "slack (shared)"))
    recorder.flush()

    drain_call_log()
    assert connection_of_row() == "slack (shared), corp"


def test_a_run_through_no_connection_queues_nothing(call_queue):
    amendments.name_connections(task_id=TASK, connections=())
    recorder.flush()
    assert stream.waiting(call_queue) == 0


def test_a_task_call_s_uid_is_a_uuid_of_its_own():
    uid = amendments.task_call_uid(TASK)
    assert uuid.UUID(uid).hex == uid
    assert uid != amendments.task_call_uid(TASK + "x")
