"""The two-role Postgres set-up (docs/audit.md): the owner role runs migrations and owns every
table and the `audit_purge` function; the application role serves, with the data rights it
needs on every table except the audit trail's, where it may only read and append.

`manage.py audit grants --app-role NAME` prints the statements; with `--apply` the owner role
runs them (after every `migrate`: they are idempotent, and default privileges already cover
tables that later migrations create, but not the audit tables' revocations).
"""

from django.db import connection

PURGE_FUNCTION = "audit_purge(bigint, bigint, timestamptz, text, text)"
AUDIT_TABLES = ("audit_auditevent", "audit_auditanchor")


class UnsafeRole(Exception):
    """The application role could undo what the grants take away."""


def statements(app_role: str, schema: str = "public") -> list[str]:
    app, schema = connection.ops.quote_name(app_role), connection.ops.quote_name(schema)
    return [
        f"GRANT USAGE ON SCHEMA {schema} TO {app}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {app}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {app}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {app}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {app}",
        # The audit trail: read and append rows; never change, delete or truncate them, never
        # touch an anchor (only the purge function moves it), never add a trigger.
        f"REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON audit_auditevent FROM {app}",
        "REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON audit_auditanchor "
        f"FROM {app}",
        f"REVOKE ALL ON FUNCTION {PURGE_FUNCTION} FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {PURGE_FUNCTION} TO {app}",
    ]


def refusals(app_role: str) -> list[str]:
    """Why the grants would not protect the audit trail from this role (empty: they would)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolcreaterole, pg_has_role(%s, current_user, 'MEMBER'), "
            "%s = current_user FROM pg_roles WHERE rolname = %s",
            [app_role, app_role, app_role],
        )
        found = cursor.fetchone()
    if found is None:
        return [f"there is no role {app_role!r}"]
    superuser, createrole, member, same = found
    reasons = []
    if same:
        reasons.append("it is the role running the migrations (the owner): use a second role")
    elif member:
        reasons.append("it is a member of the owner role, so it can act as the owner")
    if superuser:
        reasons.append("it is a superuser")
    if createrole:
        reasons.append("it has CREATEROLE, so it can make itself a member of the owner role")
    return reasons


def apply(app_role: str) -> list[str]:
    if reasons := refusals(app_role):
        raise UnsafeRole(f"role {app_role!r} cannot be the application role: " + "; ".join(reasons))
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        (schema,) = cursor.fetchone()
        done = statements(app_role, schema)
        for statement in done:
            cursor.execute(statement)
    return done
