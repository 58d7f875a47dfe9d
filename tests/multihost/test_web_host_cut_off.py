"""A web host cut off the network (its bridge port down, its process still running): the
balancer host stops sending it connections, sessions made before go on on the other web hosts,
and an SSE stream it held resumes on another web host with Last-Event-ID, losing nothing.
The times to heal are printed in the terminal summary."""

import json
import time

import pytest

from tests.multihost.faults import (
    all_up,
    change_tool,
    echoes,
    joined,
    listed_changes,
    read_events,
    seconds_until,
    session,
)


@pytest.fixture
def reconnect_afterwards(topology, heal_times):
    """Whatever a test cut off is back on the network and in the balancer's rotation after it."""
    yield
    for web in topology.webs:
        web.host.reconnect()
    heal_times["a cut-off web host back in rotation once reconnected"] = seconds_until(
        lambda: all_up(topology), timeout=30, what="every web host to be UP again"
    )


def test_a_cut_off_web_host_is_routed_around_and_sessions_go_on_on_the_others(
    topology, tenant, heal_times, reconnect_afterwards
):
    sessions = [session(topology, tenant) for _ in range(4)]
    cut = topology.webs[0]
    started = time.monotonic()
    cut.host.cut()
    # Calls on new connections while the balancer finds out: each answers (a connection to the
    # cut host times out and is sent to another one).
    slowest = 0.0
    while topology.balancer.status()["web1"] == "UP":
        began = time.monotonic()
        assert echoes(topology.url, tenant["slug"], tenant["key"], timeout=15)
        slowest = max(slowest, time.monotonic() - began)
        assert time.monotonic() - started < 30, "the balancer never marked the cut host down"
    heal_times["web host cut off: marked down by the balancer"] = time.monotonic() - started
    heal_times["web host cut off: slowest call meanwhile"] = slowest
    # Marked down, it is given no connection: every call goes to the hosts that are left.
    given = topology.balancer.connections_per_process()
    for _ in range(10):
        assert echoes(topology.url, tenant["slug"], tenant["key"])
    now = topology.balancer.connections_per_process()
    assert now["web1"] == given["web1"]
    assert sum(now.values()) - sum(given.values()) == 10
    # Every session made before the cut answers on the hosts that are left.
    for number, made in enumerate(sessions):
        client = joined(topology, tenant, made)
        answer = client.call("tools/call", {"name": "echo", "arguments": {"message": f"s{number}"}})
        assert answer["result"]["content"] == [{"type": "text", "text": f"You said s{number}"}]
        client.http.close()
        made.http.close()
    assert cut.running  # cut off, not dead


def test_a_stream_resumes_on_another_web_host_after_its_host_is_cut_off(
    topology, tenant, heal_times, reconnect_afterwards
):
    made = session(topology, tenant)
    made.http.close()  # only the stream's connection stays open through the balancer
    listener = joined(topology, tenant, made)
    headers = listener.headers(accept="text/event-stream")
    before = topology.balancer.open_connections()
    with listener.http.stream("GET", listener.url, headers=headers, timeout=30) as stream:
        assert stream.status_code == 200
        holding = [
            backend
            for connection, backend in topology.balancer.open_connections().items()
            if connection not in before
        ]
        assert len(holding) == 1
        change_tool(topology, tenant["slug"], "first change")
        first = listed_changes(read_events(stream, listed_changes))
        assert len(first) == 1 and first[0]["id"]
        # The stream's web host drops off the network; the client gives up on the stream.
        topology.balancer.backend(holding[0]).host.cut()

    # While no stream is open, the tool changes again: the notification waits in Redis.
    change_tool(topology, tenant["slug"], "second change")
    resumed_client = joined(topology, tenant, made)
    resume_headers = {**headers, "last-event-id": first[0]["id"]}
    before = topology.balancer.open_connections()
    resumed_at = time.monotonic()
    with resumed_client.http.stream(
        "GET", resumed_client.url, headers=resume_headers, timeout=30
    ) as resumed:
        assert resumed.status_code == 200
        now_holding = [
            backend
            for connection, backend in topology.balancer.open_connections().items()
            if connection not in before
        ]
        events = read_events(resumed, listed_changes, seconds=15)
        heal_times["stream of a cut-off web host: resumed to the missed event"] = (
            time.monotonic() - resumed_at
        )
    listener.http.close()
    resumed_client.http.close()
    assert len(now_holding) == 1 and now_holding != holding
    # Exactly the change made after the last event seen: none lost, none repeated.
    second = listed_changes(events)
    assert len(second) == 1 and second[0]["id"] != first[0]["id"]
    assert json.dumps(second[0]["data"]) == json.dumps(first[0]["data"])
