"""Embedded mode (SQLite): the same MAC chain and checkpoints, a release's SHA-256 chains
rechained by the migration, and a rewrite or a truncation made straight in the file caught by
`manage.py audit verify`. (Database roles are Postgres's: tests/audit/test_roles.py.)"""

import hashlib
import sqlite3

import pytest

from audit import chain
from tests.audit.sites import RECHAIN_NOTES, SEED_OLD_CHAINS, Site, write_rows


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    home = tmp_path_factory.mktemp("embedded")
    site = Site(f"sqlite:///{home / 'db.sqlite3'}", home / "checkpoints")
    site.edited = int(site.run(SEED_OLD_CHAINS))
    site.manage("migrate", "--noinput")
    site.path = home / "db.sqlite3"
    return site


def test_the_migration_rechains_sqlite_rows_and_records_an_earlier_edit(site):
    notes = site.run(RECHAIN_NOTES).splitlines()
    assert "'previous_chain': 'intact'" in notes[0] and "'rows': 3" in notes[0]
    assert f"broken at row {site.edited}" in notes[1]
    verified = site.manage("audit", "verify")
    assert "organization 7: 4 row(s), chain intact" in verified.stdout
    assert "organization 8: 3 row(s), chain intact" in verified.stdout


def test_retention_purges_in_python_and_what_is_left_verifies(site):
    assert "Purged 3 audit row(s)." in site.manage("audit", "purge", "--days", "365").stdout
    assert "organization 7: 1 row(s), chain intact" in site.manage("audit", "verify").stdout


def test_a_rewrite_and_a_truncation_in_the_file_fail_verify(site):
    """Last in this module: it leaves two chains broken."""
    written = site.run(write_rows((9, 3), (10, 4))).splitlines()
    rewritten, truncated = ([int(i) for i in line.split()] for line in written)
    assert "Wrote " in site.manage("audit", "checkpoint").stdout
    with sqlite3.connect(site.path) as db:
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT * FROM audit_auditevent WHERE organization_id = 9 ORDER BY id"
        ).fetchall()
        prev = rows[0]["prev_hash"]
        for values in rows:
            row = _Row(dict(values))
            if row.id == rewritten[0]:
                row.actor_label = "someone else"
            row.prev_hash = prev
            prev = hashlib.sha256(chain.canonical(row)).hexdigest()
            db.execute(
                "UPDATE audit_auditevent SET actor_label = ?, prev_hash = ?, hash = ? WHERE id = ?",
                [row.actor_label, row.prev_hash, prev, row.id],
            )
        db.execute("DELETE FROM audit_auditevent WHERE id >= ?", [truncated[2]])
    failed = site.manage("audit", "verify", check=False)
    assert failed.returncode != 0 and "audit chain(s) broken" in failed.stderr
    assert f"organization 9: BROKEN at row {rewritten[0]}: its content" in failed.stdout
    assert f"organization 10: BROKEN at row {truncated[3]}" in failed.stdout
    assert "truncated" in failed.stdout


class _Row:
    def __init__(self, values: dict):
        from datetime import datetime

        import orjson

        self.__dict__.update(values)
        self.at = datetime.fromisoformat(values["at"])
        self.diff = orjson.loads(values["diff"])
