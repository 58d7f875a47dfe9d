"""Adversarial tests: one tenant attacks the shared server process while another tenant pings.

`under_attack` runs the attack while a second thread pings the victim's server back to back,
and keeps the pings that overlapped the attack. The machine running the tests is shared (two
cores, other test runs), so one measurement may be disturbed by someone else's work: up to
three attempts are made and the first one within bounds counts. Before the bounds existed an
attack held the loop for seconds on every attempt, so the bound stays meaningful.
"""

import threading
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from accounts.models import ApiKey, User
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

PING_BOUND_MS = 100
ANSWER_BOUND_S = 2.0
ATTEMPTS = 3


@dataclass
class Measured:
    answer: object
    attack_seconds: float
    victim_max_ms: float
    victim_pings: int
    baseline_ms: float

    def report(self, name: str) -> str:
        return (
            f"[adversarial] {name}: attack answered in {self.attack_seconds * 1000:.0f} ms; "
            f"other tenant's ping max {self.victim_max_ms:.1f} ms over {self.victim_pings} pings "
            f"(its median ping just before: {self.baseline_ms:.1f} ms)"
        )


def _once(attack, victim: RawMcp) -> Measured:
    pings: list[tuple[float, float]] = []
    stop = threading.Event()

    def pinger():
        while not stop.is_set():
            started = time.perf_counter()
            reply = victim.call("ping")
            assert reply.get("result") == {}, reply
            pings.append((started, time.perf_counter()))

    thread = threading.Thread(target=pinger, daemon=True)
    thread.start()
    # The pinger is in its stride when the attack starts (its pings so far are the baseline).
    wait_until(lambda: len(pings) >= 10, what="ten pings of the other tenant before the attack")
    began = time.perf_counter()
    answer = attack()
    ended = time.perf_counter()
    # Every ping that overlapped the attack has ended once one begun after it has.
    wait_until(lambda: any(s >= ended for s, _ in pings), what="a ping begun after the attack")
    stop.set()
    thread.join(30)
    overlapping = [(e - s) * 1000 for s, e in pings if s < ended and e > began]
    assert overlapping, "no ping of the other tenant overlapped the attack"
    before = sorted((e - s) * 1000 for s, e in pings if e <= began) or [0.0]
    baseline = before[len(before) // 2]
    return Measured(answer, ended - began, max(overlapping), len(overlapping), baseline)


def under_attack(attack, victim: RawMcp, name: str) -> Measured:
    """The attack's answer and timings; asserts the bounds (best of ATTEMPTS measurements)."""
    measured = None
    for _ in range(ATTEMPTS):
        measured = _once(attack, victim)
        if measured.victim_max_ms < PING_BOUND_MS and measured.attack_seconds < ANSWER_BOUND_S:
            break
    print(measured.report(name))
    assert measured.attack_seconds < ANSWER_BOUND_S, measured.report(name)
    assert measured.victim_max_ms < PING_BOUND_MS, measured.report(name)
    return measured


def _tenant(slug: str, email: str, definition: dict):
    user = User.objects.create_user(email, "long enough password 9")
    org = user.personal_organization()
    server = import_definition(definition, org)
    key, raw = ApiKey.issue(org, "adversarial key")
    return SimpleNamespace(user=user, org=org, server=server, slug=server.slug, key=key, raw=raw)


@pytest.fixture
def victim(committed, unique, asgi_server) -> RawMcp:
    """Another organization's server, with an open session that pings."""
    tenant = committed(
        _tenant, f"v-{unique}", f"victim-{unique}@example.com", server_definition(f"v-{unique}")
    )
    client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
    client.initialize()
    return client


@pytest.fixture
def attacker(committed, unique, asgi_server):
    """make(tools=[...], **fields): the attacker's server, and a session on it."""

    def make(**fields) -> SimpleNamespace:
        definition = {
            "slug": f"a-{unique}",
            "name": f"attacker {unique}",
            "version": "1.0.0",
            "auth": "api_key",
            "status": "active",
            **fields,
        }
        tenant = committed(
            _tenant, definition["slug"], f"attacker-{unique}@example.net", definition
        )
        tenant.client = RawMcp(asgi_server.mcp_url(tenant.slug), key=tenant.raw)
        tenant.client.initialize()
        return tenant

    return make


def static_tool(name: str, text: str, input_schema=None) -> dict:
    return {
        "name": name,
        "description": "attack",
        "inputSchema": input_schema or {"type": "object", "properties": {}},
        "kind": "static",
        "config": {"content": [{"type": "text", "text": text}]},
    }


def tool_text(reply: dict) -> str:
    return "\n".join(c.get("text", "") for c in reply["result"]["content"])
