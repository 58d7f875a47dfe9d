"""Signed checkpoints of the chain heads, outside the database: what a MAC cannot show (the
newest rows deleted, a head rewritten by someone with the key) `verify` finds against them."""

import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from audit import chain, checkpoints
from audit.context import Actor
from audit.models import AuditEvent
from audit.record import audit_record
from tests.audit.test_chain import _tamper
from tests.celery_workers import ROOT, database_url_for_workers
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db

ALICE = Actor("user", "1", "alice@example.com", None)


def _rows(org, n):
    return [
        audit_record(
            action="tool.update", organization_id=org.pk, target_label=f"t{i}", actor=ALICE
        )
        for i in range(n)
    ]


def test_a_checkpoint_holds_every_chains_head_under_a_mac(org, outsider_org, checkpoint_dir):
    *_, mine = _rows(org, 2)
    path = checkpoints.export()
    assert path.parent == checkpoint_dir and path.name.startswith("audit-checkpoint-")
    body = json.loads(path.read_text())
    heads = {c["organization_id"]: (c["head_id"], c["head_mac"]) for c in body["chains"]}
    assert heads[org.pk] == (mine.pk, mine.hash)
    assert outsider_org.pk in heads
    assert len(body["mac"]) == 64 and body["key_id"]
    assert checkpoints.latest().heads == heads
    assert not list(checkpoint_dir.glob(".tmp-*"))  # written whole, then renamed


def test_deleting_the_newest_rows_passes_the_mac_chain_but_not_the_checkpoint(org, capsys):
    rows = _rows(org, 4)
    checkpoints.export()
    _tamper("DELETE FROM audit_auditevent WHERE id >= %s", [rows[2].pk])
    assert chain.verify(org.pk)[1] is None  # what is left is a valid chain
    with pytest.raises(CommandError, match=f"first at row {rows[3].pk}"):
        call_command("audit", "verify", "--org", org.slug)
    out = capsys.readouterr().out
    assert f"BROKEN at row {rows[3].pk}" in out
    assert "truncated" in out and f"the newest left is row {rows[1].pk}" in out


def test_without_a_checkpoint_verify_says_that_truncation_cannot_be_seen(org, capsys):
    _rows(org, 2)
    call_command("audit", "verify", "--org", org.slug)
    assert "warning: no checkpoint" in capsys.readouterr().out


def test_rows_written_after_the_checkpoint_keep_the_chain_intact(org, capsys):
    _rows(org, 2)
    checkpoints.export()
    _rows(org, 2)
    call_command("audit", "verify", "--org", org.slug)
    out = capsys.readouterr().out
    assert "5 row(s), chain intact" in out and "checked against the checkpoint of" in out


def test_a_head_rewritten_with_the_key_itself_still_differs_from_the_checkpoint(org, capsys):
    *_, head = _rows(org, 3)
    checkpoints.export()
    forged = AuditEvent.objects.get(pk=head.pk)
    forged.target_label = "nothing to see"
    forged.hash = chain.digest(forged)
    _tamper(
        "UPDATE audit_auditevent SET target_label = %s, hash = %s WHERE id = %s",
        [forged.target_label, forged.hash, head.pk],
    )
    assert chain.verify(org.pk)[1] is None
    with pytest.raises(CommandError):
        call_command("audit", "verify", "--org", org.slug)
    assert "differs from the checkpoint" in capsys.readouterr().out


def test_an_altered_checkpoint_is_reported_and_fails_verify(org, capsys):
    rows = _rows(org, 3)
    path = checkpoints.export()
    body = json.loads(path.read_text())
    for entry in body["chains"]:
        if entry["organization_id"] == org.pk:
            entry["head_id"] = rows[0].pk  # as if the chain had ended earlier
            entry["head_mac"] = rows[0].hash
    path.write_text(json.dumps(body))
    with pytest.raises(CommandError, match="does not match its MAC"):
        call_command("audit", "verify")


def test_a_head_purged_by_retention_is_not_taken_for_truncation(aged, checkpoint_dir, capsys):
    from accounts.models import User
    from audit import retention

    with aged(400):
        org = User.objects.create_user(
            "olga@example.com", "a long passphrase"
        ).personal_organization()
        old = _rows(org, 2)
    checkpoints.export()
    _rows(org, 1)
    assert retention.purge(365) >= 2
    assert not AuditEvent.objects.filter(pk=old[-1].pk).exists()
    call_command("audit", "verify", "--org", org.slug)
    assert "chain intact" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_celery_beat_writes_a_checkpoint_on_its_schedule(org, tmp_path):
    """A real worker with its beat, checkpointing every second into the configured directory."""
    (mine,) = _rows(org, 1)
    target = tmp_path / "beat-checkpoints"
    log = tmp_path / "worker.log"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_for_workers(),
        "AUDIT_CHECKPOINT_DIR": str(target),
        "AUDIT_CHECKPOINT_SECONDS": "1",
        "DJANGO_SETTINGS_MODULE": "getmcp.settings",
    }
    env.pop("TEST_DB_NAME", None)
    command = [sys.executable, "-m", "celery", "-A", "getmcp.celery", "worker", "-B"]
    command += ["--pool=solo", "--loglevel=INFO", f"--schedule={tmp_path / 'beat-schedule'}"]
    command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    with open(log, "wb") as out:
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            files = wait_until(
                lambda: (
                    sorted(target.glob("audit-checkpoint-*.json"))[1:]
                    and sorted(target.glob("audit-checkpoint-*.json"))
                ),
                timeout=90,
                what="two checkpoints written by beat",
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{log.read_text(errors='replace')}") from exc
        finally:
            worker.terminate()
            worker.wait(30)
    body = json.loads(files[-1].read_text())
    heads = {c["organization_id"]: c["head_id"] for c in body["chains"]}
    assert heads[org.pk] == mine.pk
    assert checkpoints.latest(target).heads[org.pk] == (mine.pk, mine.hash)


def test_verify_checks_against_a_checkpoint_file_named_on_the_command_line(org, tmp_path, capsys):
    """A copy kept elsewhere (an object store, a colleague's disk) still counts after the
    directory's newer files are gone."""
    rows = _rows(org, 3)
    kept = tmp_path / "kept.json"
    kept.write_bytes(checkpoints.export().read_bytes())
    for path in checkpoints.directory().glob("*.json"):
        path.unlink()
    _tamper("DELETE FROM audit_auditevent WHERE id = %s", [rows[2].pk])
    call_command("audit", "verify", "--org", org.slug)  # nothing to check against: a warning
    assert "warning: no checkpoint" in capsys.readouterr().out
    with pytest.raises(CommandError, match=f"first at row {rows[2].pk}"):
        call_command("audit", "verify", "--org", org.slug, "--checkpoint", str(kept))
    assert "truncated" in capsys.readouterr().out
