"""Every Redis key name of the platform is built in infra/keys.py: no other product module
writes one (a key prefix in an f-string or a constant elsewhere would be a second place)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ["accounts", "activity", "api", "dashboard", "getmcp", "infra", "mcptasks", "oauth"]
PRODUCT += ["servers", "vault", "audit", "inspector", "observability"]
# The prefixes every key of ours starts with.
KEY_LITERAL = re.compile(r"""f?["'](mcp|vault|throttle|getmcp|oauth):[a-z{]""")
# An OAuth scope and URL names ("oauth:connected_apps") share the look of a key.
NOT_KEYS = {"mcp:read", "redirect(", "reverse(", "reverse_lazy(", '"back": "oauth:'}


def test_no_module_but_infra_keys_spells_a_redis_key():
    found = []
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if path == ROOT / "infra" / "keys.py" or "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = KEY_LITERAL.search(line)
                if match and not any(name in line for name in NOT_KEYS):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_what_one_script_or_multi_key_command_touches_lives_in_one_cluster_slot():
    from redis.crc import key_slot

    from infra import keys

    sid = "a1b2c3"
    session = {
        key_slot(name.encode())
        for name in (
            keys.session(sid),
            keys.session_stream(sid, "get"),
            keys.client_response(sid, "7"),
            keys.cancellation(sid, "7"),  # BLPOP waits on this and the response together
            keys.session_subscriptions(sid),
            keys.stream_leases_of_session(sid),
        )
    }
    assert len(session) == 1
    # One CHARGE script counts the month's calls and the minute's, per key and per tool.
    quota = {
        key_slot(name.encode())
        for name in (
            keys.quota_month(42, "202611"),
            keys.quota_minute(42, 7, "key:1", 1000),
            keys.quota_minute(42, 8, "key:2", 1000, "echo"),
        )
    }
    assert len(quota) == 1
    assert key_slot(keys.session("another").encode()) not in session


def test_a_cluster_url_may_name_several_nodes():
    from infra.redis import cluster_url_and_nodes

    url, others = cluster_url_and_nodes("redis://:secret@10.0.0.1:7000,10.0.0.2:7001,h3:7002/0")
    assert url == "redis://:secret@10.0.0.1:7000/0"
    assert others == [("10.0.0.2", 7001), ("h3", 7002)]
    assert cluster_url_and_nodes("redis://10.0.0.1:7000/0") == ("redis://10.0.0.1:7000/0", [])
