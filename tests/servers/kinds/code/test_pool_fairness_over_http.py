"""The sandbox pool's fairness through a live server: one person's three organizations running
sleeping and spinning code tools at once cannot slow another person's code tool (or static
tools), because shares count by the paying account and a sleeping call holds no worker."""

import statistics
import threading
import time

import pytest

from tests.conftest import LiveServer
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

from .live import code_tool_def

# A sleeper naps for most of its wall time: before sleeps were parked it held a worker for all of
# it. A spinner burns its whole CPU allowance.
NAP = "import time\ndef main(args):\n    for _ in range(6):\n        time.sleep(0.5)\n    return 'rested'\n"
SPIN = "def main(args):\n    while True:\n        pass\n"
ATTACK_SECONDS = 12
SLEEPERS_PER_ORG = 4
SPINNERS_PER_ORG = 1


@pytest.fixture(scope="module")
def live(live_database):
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    # The deployment's defaults: four sandbox workers, no per-organization override.
    server = LiveServer(live_database, extra_env={"CODE_SANDBOX_WORKERS": "4"})
    yield server
    server.stop()


def _server_in(org, slug: str, tools: list[dict]):
    from accounts.models import ApiKey
    from servers.definition import import_definition

    import_definition({"slug": slug, "name": slug, "version": "1.0.0", "tools": tools}, org)
    _, raw = ApiKey.issue(org, "test key")
    return slug, raw


@pytest.fixture
def attacker(committed, unique):
    """One person with three organizations (the personal one and two more), each with a server
    of sleeping and spinning code tools."""
    from accounts import services
    from accounts.models import User

    tools = [
        code_tool_def("nap", NAP, config={"limits": {"wallSeconds": 10}}),
        code_tool_def("spin", SPIN, config={"limits": {"cpuSeconds": 2}}),
    ]

    def make():
        user = User.objects.create_user(f"attacker-{unique}@example.com", "long enough password 9")
        orgs = [user.personal_organization()]
        for n in (2, 3):
            orgs.append(services.organization_create(user=user, name=f"a{n} {unique}").organization)
        assert len({org.pk for org in orgs}) == 3
        return [_server_in(org, f"att{n}-{unique}", tools) for n, org in enumerate(orgs)]

    return committed(make)


@pytest.fixture
def victim(committed, unique):
    from accounts.models import User

    tools = [
        code_tool_def("quick", "def main(args):\n    return 'quick'\n"),
        {
            "name": "hello",
            "description": "a static tool",
            "inputSchema": {"type": "object"},
            "kind": "static",
            "config": {"content": [{"type": "text", "text": "hello"}]},
        },
    ]

    def make():
        user = User.objects.create_user(f"victim-{unique}@example.com", "long enough password 9")
        return _server_in(user.personal_organization(), f"victim-{unique}", tools)

    return committed(make)


def _session(live, slug: str, raw: str) -> RawMcp:
    client = RawMcp(live.mcp_url(slug), key=raw)
    client.http.timeout = 60
    client.initialize()
    return client


def _call(client: RawMcp, name: str) -> dict:
    return client.call("tools/call", {"name": name, "arguments": {}})["result"]


def _timed_ms(client: RawMcp, name: str) -> tuple[float, dict]:
    started = time.perf_counter()
    result = _call(client, name)
    return (time.perf_counter() - started) * 1000, result


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _measure(client: RawMcp, seconds: float) -> tuple[list[float], list[float]]:
    """The victim's code tool and static tool, called in turn for `seconds`: their latencies."""
    code_ms: list[float] = []
    static_ms: list[float] = []
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        ms, result = _timed_ms(client, "quick")
        assert result.get("isError") is not True, result
        assert result["content"][0]["text"] == "quick"
        code_ms.append(ms)
        ms, result = _timed_ms(client, "hello")
        assert result["content"][0]["text"] == "hello"
        static_ms.append(ms)
    return code_ms, static_ms


def _figures(what: str, values: list[float]) -> str:
    return (
        f"{what} ({len(values)} calls): median {statistics.median(values):.1f} ms, "
        f"p95 {_p95(values):.1f} ms, max {max(values):.1f} ms"
    )


def test_three_organizations_of_one_person_cannot_slow_another_persons_code_tool(
    live, attacker, victim
):
    victim_client = _session(live, *victim)
    for _ in range(5):  # warm: the victim's snapshot, its connection, a sandbox worker
        assert _call(victim_client, "quick")["content"][0]["text"] == "quick"
        assert _call(victim_client, "hello")["content"][0]["text"] == "hello"
    # The machine is shared: what the victim sees without the attack is measured beside it.
    quiet_code, quiet_static = _measure(victim_client, 4)

    stop = threading.Event()
    outcomes: dict[str, list[dict]] = {"nap": [], "spin": []}
    guard = threading.Lock()

    def attack(slug: str, raw: str, tool: str):
        client = _session(live, slug, raw)
        try:
            while not stop.is_set():
                result = _call(client, tool)
                with guard:
                    outcomes[tool].append(result)
        finally:
            client.http.close()

    threads = [
        threading.Thread(target=attack, args=(slug, raw, tool), daemon=True)
        for slug, raw in attacker
        for tool, count in (("nap", SLEEPERS_PER_ORG), ("spin", SPINNERS_PER_ORG))
        for _ in range(count)
    ]
    for thread in threads:
        thread.start()
    from .sandbox_processes import busy_workers

    # The attack is on: spinners are running in sandbox workers.
    wait_until(lambda: busy_workers(live.process.pid), timeout=15)
    code_ms, static_ms = _measure(victim_client, ATTACK_SECONDS)
    stop.set()
    for thread in threads:
        thread.join(40)
    after_code, after_static = _measure(victim_client, 4)
    victim_client.http.close()
    quiet_code += after_code
    quiet_static += after_static

    naps = [r for r in outcomes["nap"] if r.get("isError") is not True]
    spins = [r for r in outcomes["spin"] if "CPU time limit" in r["content"][0]["text"]]
    # Anything else an attacker's call got is the pool telling it to wait its turn.
    refused = [r for tool in outcomes.values() for r in tool if r.get("isError") is True]
    refused = [r for r in refused if r not in spins]
    print(
        f"\nunder attack: {_figures('victim code tool', code_ms)}; "
        f"{_figures('static tool', static_ms)}\nwithout: {_figures('victim code tool', quiet_code)}"
        f"; {_figures('static tool', quiet_static)}\nattacker: "
        f"{len(naps)}/{len(outcomes['nap'])} naps rested, {len(spins)}/{len(outcomes['spin'])} spins "
        f"stopped at the CPU limit, {len(refused)} calls refused: busy"
    )
    # The attack did what it meant to: naps ran to their end and spinners to their CPU limit.
    assert naps and all(r["content"][0]["text"] == "rested" for r in naps)
    assert spins and all(
        r["content"][0]["text"] == "The code tool was stopped: CPU time limit exceeded (2 s)."
        for r in spins
    )
    assert all("try again shortly" in r["content"][0]["text"] for r in refused)
    assert len(code_ms) >= 20
    # The targets: the victim's code tool at p95 under 250 ms, its static tool under 100 ms,
    # over what this shared machine gives it without the attack (other jobs run beside tests;
    # before shares counted by person and sleeps parked, this p95 was seconds).
    assert _p95(code_ms) < 250 + _p95(quiet_code)
    assert _p95(static_ms) < 100 + _p95(quiet_static)
