"""Reading the audit log: the dashboard page and its CSV, the API with the same filters, and
the retention purge that keeps what is left verifiable."""

import csv
import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Membership, User
from audit import chain, retention
from audit.context import Actor
from audit.models import AuditAnchor, AuditEvent
from audit.record import audit_record
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

BOB = Actor("user", "2", "bob@example.com", "10.9.8.7")
CI = Actor("key", "5", "ci key", None)


@pytest.fixture
def history(org):
    _write_history(org)


def _write_history(org):
    audit_record(
        action="server.create",
        organization_id=org.pk,
        target_type="server",
        target_label="weather",
        after={"slug": "weather"},
        actor=BOB,
    )
    audit_record(
        action="tool.update",
        organization_id=org.pk,
        target_type="tool",
        target_label="forecast",
        before={"description": "a"},
        after={"description": "b"},
        actor=CI,
    )
    audit_record(
        action="secret.rotate",
        organization_id=org.pk,
        target_type="secret",
        target_label="TOKEN",
        actor=BOB,
    )


def test_the_page_lists_and_filters_the_organizations_rows(client, user, org, history):
    client.force_login(user)
    page = client.get("/organization/audit/").content.decode()
    assert "weather" in page and "forecast" in page and "10.9.8.7" in page
    filtered = client.get("/organization/audit/", {"actor": "bob@", "action": "server"})
    text = filtered.content.decode()
    assert 'data-audit-row="server.create"' in text
    assert 'data-audit-row="tool.update"' not in text
    assert 'data-audit-row="secret.rotate"' not in text
    bad = client.get("/organization/audit/", {"from": "yesterday"})
    assert bad.status_code == 400


def test_the_csv_has_the_filtered_rows_with_their_hashes(client, user, org, history):
    client.force_login(user)
    response = client.get("/organization/audit.csv", {"target": "tool"})
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["action"] for r in rows] == ["tool.update"]
    assert rows[0]["actor_label"] == "ci key"
    assert '"after":{"description":"b"}' in rows[0]["diff"]
    assert (
        rows[0]["hash"] == AuditEvent.objects.get(organization_id=org.pk, action="tool.update").hash
    )


def test_viewers_and_members_may_not_read_it(client, org, history):
    for role in (Membership.VIEWER, Membership.MEMBER):
        someone = User.objects.create_user(f"{role}@example.com", "long enough password 1")
        Membership.objects.create(organization=org, user=someone, role=role)
        client.force_login(someone)
        client.post("/organizations/switch/", {"organization": org.slug})
        assert client.get("/organization/audit/").status_code == 403
        api = client_for(someone)
        assert api.get(f"/api/organizations/{org.slug}/audit/").status_code == 403


def test_the_api_pages_and_filters_like_the_page(user, org, outsider, history):
    api = client_for(user)
    body = api.get(f"/api/organizations/{org.slug}/audit/", {"action": "tool.update"}).json()
    (row,) = body["results"]
    assert row["actor"] == {"type": "key", "id": "5", "label": "ci key"}
    assert row["target"] == {"type": "tool", "id": "", "label": "forecast"}
    assert row["diff"] == {"before": {"description": "a"}, "after": {"description": "b"}}
    everything = api.get(f"/api/organizations/{org.slug}/audit/", {"page_size": 2}).json()
    assert len(everything["results"]) == 2 and everything["next"]
    today = timezone.now().date().isoformat()
    dated = api.get(f"/api/organizations/{org.slug}/audit/", {"from": today, "actor": "bob"})
    assert {r["action"] for r in dated.json()["results"]} == {"server.create", "secret.rotate"}
    old = api.get(f"/api/organizations/{org.slug}/audit/", {"to": "2000-01-01"})
    assert old.json()["results"] == []
    assert api.get(f"/api/organizations/{org.slug}/audit/", {"from": "x"}).status_code == 400
    assert client_for(outsider).get(f"/api/organizations/{org.slug}/audit/").status_code == 404


@pytest.fixture
def old_org(aged):
    """An organization whose whole history (its creation included) is 400 days old."""
    with aged(400):
        owner = User.objects.create_user("olga@example.com", "a long enough passphrase")
        org = owner.personal_organization()
        _write_history(org)
    return org


def test_the_purge_drops_old_rows_and_what_is_left_still_verifies(old_org):
    org = old_org
    first_kept = AuditEvent.objects.filter(organization_id=org.pk).order_by("id").last()
    # Everything is older than the retention: all goes except the newest row, kept as the
    # chain's head.
    deleted = retention.purge(365)
    assert deleted >= 3
    left = list(AuditEvent.objects.filter(organization_id=org.pk))
    assert [r.pk for r in left] == [first_kept.pk]
    anchor = AuditAnchor.objects.get(organization_id=org.pk)
    assert (anchor.first_id, anchor.prev_hash) == (first_kept.pk, first_kept.prev_hash)
    assert anchor.key_id == first_kept.key_id and len(anchor.mac) == 64
    assert chain.verify(org.pk) == (1, None)
    # New rows link on to the kept head.
    new = audit_record(action="server.update", organization_id=org.pk, actor=BOB)
    assert new.prev_hash == first_kept.hash
    call_command("audit", "verify", "--org", org.slug)


def test_the_purge_keeps_what_is_younger_than_the_retention(old_org, aged):
    org = old_org
    with aged(10):
        recent = audit_record(action="server.update", organization_id=org.pk, actor=BOB)
    newest = audit_record(action="tool.update", organization_id=org.pk, actor=BOB)
    assert retention.purge(365) >= 3
    left = AuditEvent.objects.filter(organization_id=org.pk).order_by("id")
    assert [r.pk for r in left] == [recent.pk, newest.pk]
    assert chain.verify(org.pk) == (2, None)


def test_the_purge_keeps_rows_inside_the_retention(org, history):
    assert retention.purge(365) == 0
    assert retention.purge(0, now=timezone.now() + timedelta(days=9999)) == 0  # 0: keep all
