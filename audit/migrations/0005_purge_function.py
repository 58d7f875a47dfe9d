"""The retention purge becomes a Postgres function, `audit_purge`, the only way rows leave.

It is SECURITY DEFINER and owned by the role that runs the migrations (the schema's owner): the
application role, which is granted EXECUTE on it and neither UPDATE nor DELETE on the audit
tables (`manage.py audit grants`, docs/audit.md), can purge only what the function allows:
rows of one chain before a kept row, every one of them older than the cutoff, and the cutoff at
least a day in the past. It moves the chain's anchor (MACed by the caller, who holds the key)
in the same transaction. The append-only trigger lets a DELETE through only while the function
runs (it sets `audit.purge` itself); setting `audit.purge` in a session of a role without
DELETE on the table gains nothing. SQLite (embedded mode) purges in Python (audit/retention.py).
"""

from django.db import migrations

SIGNATURE = "audit_purge(bigint, bigint, timestamptz, text, text)"

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

CREATE OR REPLACE FUNCTION audit_purge(
    p_organization_id bigint,
    p_first_kept_id bigint,
    p_cutoff timestamptz,
    p_key_id text,
    p_anchor_mac text
) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, {schema}, pg_temp AS $$
DECLARE
    kept_prev text;
    deleted bigint;
BEGIN
    IF p_cutoff > now() - interval '1 day' THEN
        RAISE EXCEPTION 'audit_purge: rows younger than a day are never purged'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT prev_hash INTO kept_prev FROM audit_auditevent
        WHERE id = p_first_kept_id AND organization_id IS NOT DISTINCT FROM p_organization_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'audit_purge: row % is not in that chain', p_first_kept_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF EXISTS (
        SELECT 1 FROM audit_auditevent
        WHERE organization_id IS NOT DISTINCT FROM p_organization_id
            AND id < p_first_kept_id AND at >= p_cutoff
    ) THEN
        RAISE EXCEPTION 'audit_purge: a row before % is not older than the cutoff', p_first_kept_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM set_config('audit.purge', 'on', true);
    DELETE FROM audit_auditevent
        WHERE organization_id IS NOT DISTINCT FROM p_organization_id AND id < p_first_kept_id;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    PERFORM set_config('audit.purge', 'off', true);
    UPDATE audit_auditanchor
        SET first_id = p_first_kept_id, prev_hash = kept_prev, key_id = p_key_id,
            mac = p_anchor_mac, purged_at = now()
        WHERE organization_id IS NOT DISTINCT FROM p_organization_id;
    IF NOT FOUND THEN
        INSERT INTO audit_auditanchor (organization_id, first_id, prev_hash, key_id, mac, purged_at)
        VALUES (p_organization_id, p_first_kept_id, kept_prev, p_key_id, p_anchor_mac, now());
    END IF;
    RETURN deleted;
END;
$$;

REVOKE ALL ON FUNCTION {signature} FROM PUBLIC;
"""

DROP = f"DROP FUNCTION IF EXISTS {SIGNATURE};"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
    schema_editor.execute(CREATE.format(schema=schema, signature=SIGNATURE), params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("audit", "0004_rechain_under_mac")]

    operations = [migrations.RunPython(forwards, backwards)]
