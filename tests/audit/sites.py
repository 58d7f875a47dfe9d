"""Separate installations for the audit tests: `manage.py` and scripts run in subprocesses on a
database of their own (a fresh SQLite file, or a Postgres database reached as a given role),
and old-style (SHA-256) chains written as a release before the MAC would have left them."""

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAC_KEYS = "site:" + "k" * 40


@dataclass
class Site:
    database_url: str
    checkpoint_dir: Path

    def env(self) -> dict:
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "AUDIT_MAC_KEYS": MAC_KEYS,
            "AUDIT_CHECKPOINT_DIR": str(self.checkpoint_dir),
            "DJANGO_SETTINGS_MODULE": "getmcp.settings",
        }
        env.pop("TEST_DB_NAME", None)
        return env

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check:
            assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done

    def run(self, code: str) -> str:
        """Run a Python script with Django set up on this site; its stdout."""
        script = "import django\ndjango.setup()\n" + textwrap.dedent(code)
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"script failed:\n{done.stdout}{done.stderr}"
        return done.stdout


# Migrates a new database to audit 0002 (the release before the MAC) and writes its chains:
# chain 7 was purged once (an anchor, rows 400 days old), chain 8's second row was edited
# behind the chain's back. Prints the edited row's id.
SEED_OLD_CHAINS = """
import importlib
from datetime import UTC, datetime, timedelta

from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

call_command("migrate", "audit", "0002", "--noinput", verbosity=0)
old = importlib.import_module("audit.migrations.0004_rechain_under_mac")
state = MigrationLoader(connection).project_state(("audit", "0002_append_only_guard"))
Event = state.apps.get_model("audit", "AuditEvent")
Anchor = state.apps.get_model("audit", "AuditAnchor")


def add(org, prev, label, days, edit=False):
    row = Event(
        organization_id=org,
        at=datetime.now(UTC) - timedelta(days=days),
        actor_type="system",
        action="server.update",
        target_label=label,
        diff={"after": {"name": label}},
        prev_hash=prev,
    )
    row.hash = old._old_digest(row)
    if edit:
        row.target_label = "edited"
    row.save(force_insert=True)
    return row


prev = "ab" * 32  # the hash of a row purged long ago
first = add(7, prev, "a", 400)
Anchor.objects.create(organization_id=7, first_id=first.pk, prev_hash=prev)
second = add(7, first.hash, "b", 400)
add(7, second.hash, "c", 400)
one = add(8, "0" * 64, "x", 1)
edited = add(8, one.hash, "y", 1, edit=True)
print(edited.pk)
"""

# Prints "organization: detail" of each audit.rechain row.
RECHAIN_NOTES = """
from audit.models import AuditEvent

for row in AuditEvent.objects.filter(action="audit.rechain").order_by("organization_id"):
    print(f"{row.organization_id}: {row.diff['detail']}")
"""


def write_rows(*chains: tuple[int, int], checkpoint: bool = False) -> str:
    """A script that appends rows to chains ((organization id, how many), ...), prints each
    chain's new ids on a line, and then writes a checkpoint if asked."""
    return f"""
from audit import checkpoints
from audit.context import Actor
from audit.record import audit_record

actor = Actor("user", "1", "alice@example.com", None)
for organization_id, n in {chains!r}:
    rows = [
        audit_record(action="tool.update", organization_id=organization_id,
                     target_label=f"t{{i}}", actor=actor)
        for i in range(n)
    ]
    print(" ".join(str(r.pk) for r in rows))
if {checkpoint!r}:
    checkpoints.export()
"""
