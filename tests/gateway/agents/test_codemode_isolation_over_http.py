"""The adversarial test of code tools, for code mode: one tenant's agent sends runaway programs
(CPU, memory, a flood of inner calls) to getmcp_run_code while another tenant's ping on the same
process stays under 100 ms (and within 100 ms of its own pace around the attack), and every
program ends at a limit it names."""

import threading
import time

import pytest

from gateway.agents.codemode import RUN
from tests.conftest import LiveServer
from tests.servers.kinds.code.live import code_tool_def, make_tenant
from tests.servers.kinds.code.sandbox_processes import busy_workers
from tests.servers.kinds.code.test_isolation_over_http import (
    assert_bystander_unharmed,
    ping_ms,
    session,
)
from tests.waiting import wait_until

from .codemode_servers import make_shop

SPIN = "async def main():\n    while True:\n        pass\n"
BOMB = "async def main():\n    xs = []\n    while True:\n        xs.append('x' * 100000)\n"
CALL_FLOOD = (
    "async def main():\n"
    "    while True:\n"
    "        await call_tool('send_email', {'to': 'a@example.com', 'subject': 'spam'})\n"
)


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
    return make_shop(committed, f"cm-attacker-{unique}", limits={"cpuSeconds": 3, "memoryMb": 32})


@pytest.fixture
def bystander(committed, unique):
    return make_tenant(
        committed, f"cm-bystander-{unique}", [code_tool_def("ok", "def main(a):\n    return 1\n")]
    )


def run(client, code: str) -> dict:
    return client.call("tools/call", {"name": RUN, "arguments": {"code": code}})["result"]


def test_runaway_programs_stop_at_their_limits_while_another_tenants_ping_stays_fast(
    live, attacker, bystander
):
    pinger = session(live, bystander)
    for _ in range(5):  # warm: the bystander's snapshot and connection
        ping_ms(pinger)
    baseline = [ping_ms(pinger) for _ in range(30)]

    results: dict[str, dict] = {}

    def attack(name: str, code: str):
        results[name] = run(session(live, attacker), code)

    programs = {"spin0": SPIN, "spin1": SPIN, "bomb": BOMB, "flood": CALL_FLOOD}
    threads = [threading.Thread(target=attack, args=item) for item in programs.items()]
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

    for name in ("spin0", "spin1"):
        assert results[name]["content"][0]["text"] == (
            "The program was stopped: CPU time limit exceeded (3 s)."
        )
    assert results["bomb"]["content"][0]["text"] == (
        "The program was stopped: memory limit exceeded (32 MB)."
    )
    assert results["flood"]["content"][0]["text"] == (
        "The program was stopped: host call limit exceeded (50 calls)."
    )
    assert all(result["isError"] for result in results.values())

    assert_bystander_unharmed(baseline, under_attack)
    # The attacker's agent is served as usual afterwards.
    fine = run(session(live, attacker), "async def main():\n    return 'fine'\n")
    assert fine["content"][0]["text"] == "fine"
