"""The two-role Postgres set-up of docs/audit.md, built as the docs say: an owner role runs the
migrations and owns the tables and the purge function; the application role, granted its rights
by `manage.py audit grants`, serves. Connected as the application role nothing can change,
delete or unguard an audit row; retention purges through the function; and a rewrite or a
truncation done with the owner's powers fails `manage.py audit verify` (MAC and checkpoint)."""

import hashlib
import re
import uuid

import psycopg
import pytest
from django.db import connection

from audit import chain
from audit import roles as roles_module
from tests.audit.sites import RECHAIN_NOTES, SEED_OLD_CHAINS, Site, write_rows

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="database roles are Postgres's (SQLite has none)"
)


def _connect(role: str, dbname: str) -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=role, dbname=dbname
    )


def _url(role: str, dbname: str) -> str:
    db = connection.settings_dict
    return f"postgres://{role}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{dbname}"


@pytest.fixture(scope="module")
def roles(tmp_path_factory):
    """(owner site, app site, names): a database owned by a fresh owner role, migrated by it
    from a release with SHA-256 chains, and an application role granted its rights."""
    suffix = uuid.uuid4().hex[:8]
    owner, app, dbname = f"audit_owner_{suffix}", f"audit_app_{suffix}", f"audit_roles_{suffix}"
    superuser = connection.settings_dict["USER"]
    checkpoints = tmp_path_factory.mktemp("checkpoints")
    with _connect(superuser, "postgres") as admin:
        admin.autocommit = True
        # docs/audit.md, "Two database roles", step 1 (passwords omitted: the test server trusts).
        admin.execute(f"CREATE ROLE {owner} LOGIN")
        admin.execute(f"CREATE ROLE {app} LOGIN")
        admin.execute(f"CREATE DATABASE {dbname} OWNER {owner}")
    try:
        as_owner = Site(_url(owner, dbname), checkpoints)
        as_app = Site(_url(app, dbname), checkpoints)
        # A database from before the MAC: its chains are rechained by the migration.
        edited = int(as_owner.run(SEED_OLD_CHAINS))
        as_owner.manage("migrate", "--noinput")  # step 2
        as_owner.manage("audit", "grants", "--app-role", app, "--apply")  # step 3
        yield as_owner, as_app, {"owner": owner, "app": app, "db": dbname, "edited": edited}
    finally:
        with _connect(superuser, "postgres") as admin:
            admin.autocommit = True
            admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {app}")
            admin.execute(f"DROP ROLE IF EXISTS {owner}")


def test_migrating_rechains_old_rows_under_the_mac_and_records_what_it_found(roles):
    _owner, app, names = roles
    notes = app.run(RECHAIN_NOTES).splitlines()
    assert notes[0].startswith("7: ") and "'previous_chain': 'intact'" in notes[0]
    assert "'rows': 3" in notes[0] and "'key_id': 'site'" in notes[0]
    assert notes[1].startswith("8: ")
    assert f"broken at row {names['edited']}: its content did not match its hash" in notes[1]
    with _connect(names["app"], names["db"]) as db:
        keys = db.execute("SELECT DISTINCT key_id FROM audit_auditevent").fetchall()
        anchor = db.execute(
            "SELECT key_id, length(mac) FROM audit_auditanchor WHERE organization_id = 7"
        ).fetchone()
    assert keys == [("site",)] and anchor == ("site", 64)
    verified = app.manage("audit", "verify")
    assert "organization 7: 4 row(s), chain intact" in verified.stdout
    assert "organization 8: 3 row(s), chain intact" in verified.stdout


REFUSED = [
    "UPDATE audit_auditevent SET action = 'x' WHERE organization_id = 8",
    "DELETE FROM audit_auditevent WHERE organization_id = 8",
    "SET LOCAL audit.purge = 'on'; DELETE FROM audit_auditevent WHERE organization_id = 8",
    "SELECT set_config('audit.purge', 'on', true); "
    "DELETE FROM audit_auditevent WHERE organization_id = 8",
    "TRUNCATE audit_auditevent",
    "ALTER TABLE audit_auditevent DISABLE TRIGGER audit_append_only",
    "ALTER TABLE audit_auditevent DISABLE TRIGGER ALL",
    "DROP TRIGGER audit_append_only ON audit_auditevent",
    "DROP TABLE audit_auditevent",
    "ALTER TABLE audit_auditevent OWNER TO CURRENT_USER",
    "CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger AS "
    "$$ BEGIN RETURN OLD; END; $$ LANGUAGE plpgsql",
    "DROP FUNCTION audit_purge(bigint, bigint, timestamptz, text, text)",
    "UPDATE audit_auditanchor SET first_id = 0",
    "DELETE FROM audit_auditanchor",
    "INSERT INTO audit_auditanchor (organization_id, first_id, prev_hash, purged_at, key_id, mac)"
    " VALUES (99, 1, '', now(), '', '')",
    "SET ROLE {owner}",
    # The function itself refuses recent rows: a whole chain but its newest row, cut today.
    "SELECT audit_purge(8, (SELECT max(id) FROM audit_auditevent WHERE organization_id = 8), "
    "now(), 'site', '')",
]


@pytest.mark.parametrize("statement", REFUSED)
def test_the_app_role_cannot_change_delete_or_unguard_audit_rows(roles, statement):
    _owner, _app, names = roles
    with _connect(names["app"], names["db"]) as db:
        before = db.execute("SELECT id, hash FROM audit_auditevent ORDER BY id").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as refused, db.transaction():
            db.execute(statement.format(owner=names["owner"]))
        after = db.execute("SELECT id, hash FROM audit_auditevent ORDER BY id").fetchall()
        table_owner = db.execute(
            "SELECT tableowner FROM pg_tables WHERE tablename = 'audit_auditevent'"
        ).fetchone()
    assert after == before
    assert table_owner == (names["owner"],)
    # Refused by the role's rights, not by the trigger (which would refuse the owner too).
    expected = "younger than a day" if "audit_purge(8" in statement else "permission denied|must be"
    assert re.search(expected, str(refused.value)), refused.value


def test_the_app_role_holds_no_right_to_change_the_audit_tables(roles):
    _owner, _app, names = roles
    with _connect(names["app"], names["db"]) as db:
        rights = db.execute(
            "SELECT t, p, has_table_privilege(t, p) FROM unnest(%s::text[]) t, "
            "unnest(%s::text[]) p",
            [
                ["audit_auditevent", "audit_auditanchor"],
                ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "TRIGGER"],
            ],
        ).fetchall()
        purge = db.execute(
            "SELECT has_function_privilege(%s, 'EXECUTE'), "
            "has_function_privilege('public', %s, 'EXECUTE')",
            [roles_module.PURGE_FUNCTION, roles_module.PURGE_FUNCTION],
        ).fetchone()
    granted = {(t, p) for t, p, ok in rights if ok}
    assert granted == {
        ("audit_auditevent", "SELECT"),
        ("audit_auditevent", "INSERT"),
        ("audit_auditanchor", "SELECT"),
    }
    assert purge == (True, False)  # the app role may run the purge; nobody else may


def test_the_app_role_reads_and_appends_rows(roles):
    _owner, app, names = roles
    ids = [int(i) for i in app.run(write_rows((11, 2))).split()]
    with _connect(names["app"], names["db"]) as db:
        count = db.execute(
            "SELECT count(*) FROM audit_auditevent WHERE organization_id = 11"
        ).fetchone()
    assert count == (2,) and ids[1] > ids[0]


def test_the_app_role_can_do_the_platforms_ordinary_work(roles):
    """`manage.py demo` as the application role: a user, an organization, a server and its
    tools written in many tables, and their audit rows appended."""
    _owner, app, names = roles
    app.manage("demo")
    with _connect(names["app"], names["db"]) as db:
        actions = {a for (a,) in db.execute("SELECT action FROM audit_auditevent").fetchall()}
    assert {"organization.create", "server.create"} <= actions


def test_retention_purges_through_the_function_as_the_app_role(roles):
    _owner, app, names = roles
    purged = app.manage("audit", "purge", "--days", "365")
    assert "Purged 3 audit row(s)." in purged.stdout  # chain 7's three old rows
    with _connect(names["app"], names["db"]) as db:
        left = db.execute(
            "SELECT action FROM audit_auditevent WHERE organization_id = 7"
        ).fetchall()
    assert left == [("audit.rechain",)]
    assert "organization 7: 1 row(s), chain intact" in app.manage("audit", "verify").stdout


def test_a_rewrite_and_a_truncation_with_owner_powers_fail_verify(roles):
    """Last in this module: it leaves two chains broken."""
    _owner, app, names = roles
    written = app.run(write_rows((9, 3), (10, 4), checkpoint=True)).splitlines()
    rewritten, truncated = ([int(i) for i in line.split()] for line in written)
    with _connect(names["owner"], names["db"]) as db:
        # What the owner can do that the app role cannot: lift the guard, edit a row and
        # recompute every later link of an unkeyed SHA-256 chain, and cut a chain's end.
        db.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_append_only")
        db.execute(
            "UPDATE audit_auditevent SET actor_label = 'someone else' WHERE id = %s",
            [rewritten[0]],
        )
        _rehash_with_sha256(db, 9, rewritten[0])
        db.execute("DELETE FROM audit_auditevent WHERE id >= %s", [truncated[2]])
        db.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_append_only")
    failed = app.manage("audit", "verify", check=False)
    assert failed.returncode != 0
    assert "audit chain(s) broken" in failed.stderr
    assert (
        f"organization 9: BROKEN at row {rewritten[0]}: its content does not match its MAC"
        in failed.stdout
    )
    assert f"organization 10: BROKEN at row {truncated[3]}" in failed.stdout
    assert "truncated" in failed.stdout


def _rehash_with_sha256(db, organization_id: int, start: int) -> None:
    """Recompute the links from `start` on the way the pre-MAC chain computed them."""
    columns = [*chain.HASHED, "prev_hash", "key_id", "id"]
    rows = db.execute(
        f"SELECT {', '.join(columns)} FROM audit_auditevent "
        "WHERE organization_id = %s AND id >= %s ORDER BY id",
        [organization_id, start],
    ).fetchall()
    prev = db.execute("SELECT prev_hash FROM audit_auditevent WHERE id = %s", [start]).fetchone()[0]
    for values in rows:
        row = type("Row", (), dict(zip(columns, values, strict=True)))()
        row.prev_hash = prev
        prev = hashlib.sha256(chain.canonical(row)).hexdigest()
        db.execute(
            "UPDATE audit_auditevent SET prev_hash = %s, hash = %s WHERE id = %s",
            [row.prev_hash, prev, row.id],
        )
