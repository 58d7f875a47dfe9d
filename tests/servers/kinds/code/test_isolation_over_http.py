"""Code tools through a live server: escapes fail clearly, runaway code stops at its limits while
another tenant's ping stays fast, and a crashed sandbox worker is one failed call."""

import os
import signal
import statistics
import threading
import time

import pytest

from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

from .live import code_tool_def, make_tenant
from .sandbox_processes import busy_workers

RUNAWAY = "def main(args):\n    while True:\n        pass\n"
MEMORY_BOMB = "def main(args):\n    xs = []\n    while True:\n        xs.append('x' * 100000)\n"
HUGE_OUTPUT = "def main(args):\n    return 'y' * 5000000\n"


@pytest.fixture(scope="module")
def live(live_database):
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(live_database)
    yield server
    server.stop()


@pytest.fixture
def attacker(committed, unique):
    return make_tenant(
        committed,
        f"attacker-{unique}",
        [
            code_tool_def("spin", RUNAWAY, config={"limits": {"cpuSeconds": 3}}),
            code_tool_def("bomb", MEMORY_BOMB, config={"limits": {"memoryMb": 32}}),
            code_tool_def("flood", HUGE_OUTPUT, config={"limits": {"outputBytes": 100000}}),
            code_tool_def(
                "escape", "import os\ndef main(args):\n    return open('/etc/passwd').read()\n"
            ),
            code_tool_def("fine", "def main(args):\n    return 'fine'\n"),
        ],
    )


@pytest.fixture
def bystander(committed, unique):
    return make_tenant(
        committed, f"bystander-{unique}", [code_tool_def("ok", "def main(a):\n    return 1\n")]
    )


def assert_bystander_unharmed(baseline: list[float], under_attack: list[float]) -> None:
    """Another tenant's pings during an attack stay under 100 ms (nine in ten of them) and
    within 100 ms of those around it (median and p90), over at least 20 samples; the figures
    are printed for the closing notes. The absolute bound is the rule's ~100 ms; the relative
    ones keep a slow machine's own pace out of the verdict either way."""

    def p90(values):
        ordered = sorted(values)
        return ordered[int(len(ordered) * 0.9)]

    print(
        f"\nbystander ping: around the attack ({len(baseline)} pings) median "
        f"{statistics.median(baseline):.1f} ms, p90 {p90(baseline):.1f} ms; under attack "
        f"({len(under_attack)} pings) median {statistics.median(under_attack):.1f} ms, "
        f"p90 {p90(under_attack):.1f} ms, max {max(under_attack):.1f} ms"
    )
    assert len(under_attack) >= 20
    assert p90(under_attack) < 100
    assert statistics.median(under_attack) - statistics.median(baseline) < 100
    assert p90(under_attack) - p90(baseline) < 100


def session(live, tenant) -> RawMcp:
    client = RawMcp(live.mcp_url(tenant.slug), key=tenant.raw)
    client.http.timeout = 60
    client.initialize()
    return client


def call(client: RawMcp, name: str) -> dict:
    return client.call("tools/call", {"name": name, "arguments": {}})["result"]


def ping_ms(client: RawMcp) -> float:
    started = time.perf_counter()
    assert client.call("ping")["result"] == {}
    return (time.perf_counter() - started) * 1000


def test_an_escape_attempt_over_mcp_is_a_clear_tool_error(live, attacker):
    result = call(session(live, attacker), "escape")
    assert result["isError"] is True
    assert "PermissionError" in result["content"][0]["text"]
    assert "/etc/passwd" in result["content"][0]["text"]


def test_runaway_code_stops_at_its_limits_while_another_tenants_ping_stays_fast(
    live, attacker, bystander
):
    pinger = session(live, bystander)
    for _ in range(5):  # warm: the bystander's snapshot and connection
        ping_ms(pinger)
    # The machine is shared: ambient load is measured around the attack, not only before it.
    baseline = [ping_ms(pinger) for _ in range(30)]

    results: dict[str, dict] = {}

    def attack(name: str, index: int):
        results[f"{name}{index}"] = call(session(live, attacker), name)

    # As many runaway calls as this machine has cores, plus a memory bomb and a flood.
    threads = [threading.Thread(target=attack, args=("spin", i)) for i in range(2)]
    threads += [
        threading.Thread(target=attack, args=("bomb", 0)),
        threading.Thread(target=attack, args=("flood", 0)),
    ]
    for thread in threads:
        thread.start()
    wait_until(
        lambda: busy_workers(live.process.pid),
        interval=0.01,
        what="a sandbox worker busy with the attack",
    )
    under_attack = []
    while any(thread.is_alive() for thread in threads) and len(under_attack) < 200:
        under_attack.append(ping_ms(pinger))
        time.sleep(0.01)  # deliberate: the pace of the samples taken during the attack
    for thread in threads:
        thread.join(30)
    baseline += [ping_ms(pinger) for _ in range(30)]

    for index in range(2):
        assert results[f"spin{index}"]["content"][0]["text"] == (
            "The code tool was stopped: CPU time limit exceeded (3 s)."
        )
    assert results["bomb0"]["content"][0]["text"] == (
        "The code tool was stopped: memory limit exceeded (32 MB)."
    )
    assert results["flood0"]["content"][0]["text"] == (
        "The code tool was stopped: output limit exceeded (100000 bytes)."
    )
    assert all(result["isError"] for result in results.values())

    assert_bystander_unharmed(baseline, under_attack)
    # The attacker's own next call is served as usual.
    assert call(session(live, attacker), "fine")["content"][0]["text"] == "fine"


def test_a_crashed_sandbox_worker_is_one_failed_call_not_a_failed_process(live, attacker):
    outcome = {}

    def spin():
        outcome["result"] = call(session(live, attacker), "spin")

    thread = threading.Thread(target=spin)
    thread.start()
    victim = wait_until(
        lambda: busy_workers(live.process.pid), interval=0.01, what="a busy sandbox worker"
    )[0]
    os.kill(victim, signal.SIGKILL)
    thread.join(30)
    result = outcome["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("The code sandbox worker crashed")
    assert live.process.poll() is None  # the web process lives on
    assert call(session(live, attacker), "fine")["content"][0]["text"] == "fine"


def test_a_client_that_hangs_up_mid_run_leaves_the_server_and_its_workers_healthy(live, attacker):
    import httpx2

    client = session(live, attacker)
    client.http.timeout = httpx2.Timeout(0.5)
    with pytest.raises(httpx2.TimeoutException):
        call(client, "spin")
    # The abandoned run is stopped (its call task cancelled) or ends at its CPU limit.
    fresh = session(live, attacker)
    assert call(fresh, "fine")["content"][0]["text"] == "fine"
    wait_until(
        lambda: busy_workers(live.process.pid) == [],
        timeout=15,
        interval=0.1,
        what="the abandoned run's worker to be free",
    )
    assert live.process.poll() is None
    assert call(fresh, "fine")["content"][0]["text"] == "fine"
