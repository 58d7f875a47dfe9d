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
