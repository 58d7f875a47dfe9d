"""The audit chain: append-only on every layer, tamper-evident, and never forked by
concurrent writers."""

import hashlib
import hmac
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections, transaction
from django.db.utils import DatabaseError

from audit import chain, keys
from audit.context import Actor
from audit.models import AppendOnly, AuditEvent
from audit.record import audit_record

pytestmark = pytest.mark.django_db

ALICE = Actor("user", "1", "alice@example.com", "10.0.0.7")


def _rows(org, n, prefix="thing"):
    return [
        audit_record(
            action="server.update",
            organization_id=org.pk,
            target_type="server",
            target_id=i,
            target_label=f"{prefix}-{i}",
            before={"name": f"old-{i}"},
            after={"name": f"new-{i}"},
            actor=ALICE,
        )
        for i in range(n)
    ]


def test_each_row_links_to_the_one_before_it_in_its_organization(org, outsider_org):
    first, second = _rows(org, 2)
    (other,) = _rows(outsider_org, 1)
    assert second.prev_hash == first.hash
    # Each organization's chain starts from nothing (its first row: the organization's creation).
    oldest = AuditEvent.objects.filter(organization_id=org.pk).order_by("id").first()
    assert (oldest.action, oldest.prev_hash) == ("organization.create", chain.GENESIS)
    assert other.prev_hash != second.hash
    assert chain.verify(org.pk) == (3, None)
    assert first.diff == {"before": {"name": "old-0"}, "after": {"name": "new-0"}}
    assert (first.actor_type, first.actor_label, first.address) == (
        "user",
        "alice@example.com",
        "10.0.0.7",
    )


def test_the_orm_refuses_to_change_or_delete_a_row(org):
    (row,) = _rows(org, 1)
    row.action = "nothing.happened"
    with pytest.raises(AppendOnly):
        row.save()
    with pytest.raises(AppendOnly):
        row.delete()
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=row.pk).update(action="x")
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=row.pk).delete()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the trigger is Postgres's")
def test_the_database_refuses_raw_updates_and_deletes(org):
    (row,) = _rows(org, 1)
    for statement in (
        "UPDATE audit_auditevent SET action = 'x' WHERE id = %s",
        "DELETE FROM audit_auditevent WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [row.pk])
    assert AuditEvent.objects.get(pk=row.pk).action == "server.update"


def _tamper(sql, params):
    """Edit rows behind the guard's back, as someone with the database owner's rights could."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER audit_append_only")
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER audit_append_only")


def test_verify_names_the_first_row_whose_content_was_edited(org, capsys):
    rows = _rows(org, 4)
    _tamper(
        "UPDATE audit_auditevent SET diff = %s WHERE id = %s",
        ['{"after": {"name": "innocent"}}', rows[2].pk],
    )
    checked, broken = chain.verify(org.pk)
    assert broken.row_id == rows[2].pk
    assert "content" in broken.reason
    with pytest.raises(CommandError, match=f"first at row {rows[2].pk}"):
        call_command("audit", "verify", "--org", org.slug)
    assert f"BROKEN at row {rows[2].pk}" in capsys.readouterr().out


def test_verify_notices_a_row_removed_from_the_middle(org):
    rows = _rows(org, 4)
    _tamper("DELETE FROM audit_auditevent WHERE id = %s", [rows[1].pk])
    _checked, broken = chain.verify(org.pk)
    assert broken.row_id == rows[2].pk
    assert "link" in broken.reason


def test_verify_notices_a_rehashed_row_because_the_next_one_no_longer_links(org):
    rows = _rows(org, 3)
    forged = AuditEvent.objects.get(pk=rows[0].pk)
    forged.actor_label = "someone else"
    new_hash = chain.digest(forged)
    _tamper(
        "UPDATE audit_auditevent SET actor_label = %s, hash = %s WHERE id = %s",
        ["someone else", new_hash, rows[0].pk],
    )
    _checked, broken = chain.verify(org.pk)
    assert broken.row_id == rows[1].pk


def test_a_rewrite_that_recomputes_an_unkeyed_sha256_chain_is_caught_by_the_mac(org, capsys):
    """The attack of issue 30: edit a row, then recompute every later link with plain SHA-256
    (all one needs is the database). Without the key no MAC comes out right."""
    rows = _rows(org, 3)
    forged = list(AuditEvent.objects.filter(organization_id=org.pk).order_by("id"))
    start = next(i for i, r in enumerate(forged) if r.pk == rows[0].pk)
    prev = forged[start].prev_hash
    for row in forged[start:]:
        if row.pk == rows[0].pk:
            row.actor_label = "someone else"
        row.prev_hash = prev
        row.hash = prev = hashlib.sha256(chain.canonical(row)).hexdigest()
        _tamper(
            "UPDATE audit_auditevent SET actor_label = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [row.actor_label, row.prev_hash, row.hash, row.pk],
        )
    _checked, broken = chain.verify(org.pk)
    assert broken.row_id == rows[0].pk and "MAC" in broken.reason
    with pytest.raises(CommandError, match="broken"):
        call_command("audit", "verify", "--org", org.slug)
    assert f"BROKEN at row {rows[0].pk}: its content does not match its MAC" in (
        capsys.readouterr().out
    )


def test_each_row_names_the_key_its_mac_was_made_with(org):
    (row,) = _rows(org, 1)
    assert row.key_id == keys.current().id
    assert len(row.hash) == 64
    assert row.hash == hmac.new(keys.current().secret, chain.canonical(row), "sha256").hexdigest()


def test_an_intact_chain_verifies_from_the_command(org, capsys):
    _rows(org, 3)
    call_command("audit", "verify", "--org", org.slug)
    assert "4 row(s), chain intact" in capsys.readouterr().out  # with the org's creation


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs concurrent connections")
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_never_fork_a_chain(org):
    barrier = threading.Barrier(4)
    errors = []

    def writer(n):
        try:
            barrier.wait()
            for i in range(15):
                # Each in its own transaction that lasts a while: the lock must be held to commit.
                with transaction.atomic():
                    audit_record(
                        action="tool.update",
                        organization_id=org.pk,
                        target_label=f"w{n}-{i}",
                        actor=ALICE,
                    )
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    rows = AuditEvent.objects.filter(organization_id=org.pk, action="tool.update")
    assert rows.count() == 60
    assert len(set(rows.values_list("prev_hash", flat=True))) == 60  # nobody linked twice
    assert chain.verify(org.pk)[1] is None
