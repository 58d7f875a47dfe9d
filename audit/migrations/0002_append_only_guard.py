"""Postgres refuses UPDATE and DELETE of audit rows, except a DELETE by the retention purge
(which sets `audit.purge` to 'on' for its own transaction). SQLite (the embedded mode) has no
such guard; the ORM refuses there too. TRUNCATE is left alone: it takes the table's owner,
and the test suite's flush between tests uses it."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND current_setting('audit.purge', true) = 'on' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit rows are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_append_only
    BEFORE UPDATE OR DELETE ON audit_auditevent
    FOR EACH ROW EXECUTE FUNCTION audit_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS audit_append_only ON audit_auditevent;
DROP FUNCTION IF EXISTS audit_append_only();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_audit_trail")]

    operations = [migrations.RunPython(forwards, backwards)]
