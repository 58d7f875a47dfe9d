"""The chain's MAC keys: a default derived from SECRET_KEY, and rotation that keeps old rows
verifiable for as long as their key is listed."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from audit import chain, keys
from audit.context import Actor
from audit.record import audit_record

ALICE = Actor("user", "1", "alice@example.com", None)
OLD = "old:" + "o" * 40
NEW = "new:" + "n" * 40


def _row(org, label):
    return audit_record(
        action="server.update", organization_id=org.pk, target_label=label, actor=ALICE
    )


def test_without_configured_keys_one_is_derived_from_the_secret_key_and_named_by_its_fingerprint(
    settings,
):
    settings.AUDIT_MAC_KEYS = []
    settings.SECRET_KEY = "one secret key of the deployment"
    first = keys.current()
    assert first.id.startswith("sk-") and len(first.id) == 11
    assert settings.SECRET_KEY.encode() not in (first.secret, first.id.encode())
    assert keys.current() == first
    settings.SECRET_KEY = "another secret key"
    assert keys.current().id != first.id and keys.current().secret != first.secret


@pytest.mark.parametrize("entry", ["no-colon" + "x" * 20, "id:short", "bad id!:" + "x" * 20])
def test_a_malformed_key_entry_is_refused(settings, entry):
    settings.AUDIT_MAC_KEYS = [entry]
    with pytest.raises(ImproperlyConfigured, match="AUDIT_MAC_KEYS"):
        keys.current()


@pytest.mark.django_db
def test_a_rotated_key_macs_new_rows_while_the_old_key_still_verifies_old_ones(settings, org):
    settings.AUDIT_MAC_KEYS = [OLD]
    before = _row(org, "before")
    settings.AUDIT_MAC_KEYS = [NEW, OLD]
    after = _row(org, "after")
    assert (before.key_id, after.key_id) == ("old", "new")
    assert after.prev_hash == before.hash
    # The organization's creation row was MACed with the derived default: "derived" keeps it.
    settings.AUDIT_MAC_KEYS = [NEW, OLD, "derived"]
    assert chain.verify(org.pk)[1] is None


@pytest.mark.django_db
def test_a_row_whose_key_was_dropped_is_reported_by_name(settings, org, capsys):
    settings.AUDIT_MAC_KEYS = [OLD, "derived"]
    old = _row(org, "old")
    settings.AUDIT_MAC_KEYS = [NEW, "derived"]
    _row(org, "new")
    _checked, broken = chain.verify(org.pk)
    assert broken.row_id == old.pk
    assert "key 'old'" in broken.reason and "no longer holds" in broken.reason
    with pytest.raises(CommandError):
        call_command("audit", "verify", "--org", org.slug)
    assert "AUDIT_MAC_KEYS no longer holds" in capsys.readouterr().out
