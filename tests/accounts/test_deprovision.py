"""accounts/deprovision.py: removing someone from an organization ends everything of theirs
there. The live proof over two web processes (keys, tokens, SSE streams) is
tests/scim/test_provisioning_live.py; here: the hook other apps connect to, the inspector
socket closing at once, and the dashboard's and API's removal going through the service."""

import asyncio

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts import services
from accounts.deprovision import member_deprovision, member_deprovisioned
from accounts.models import ApiKey, Membership, User
from audit.models import AuditEvent
from getmcp.asgi import application
from inspector.consumers import CLOSE_REFUSED
from inspector.watch import REFRESH_SECONDS
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition


@pytest.fixture
def team(committed, unique):
    def make():
        owner = User.objects.create_user(f"owner-{unique}@example.com", "a long password 1")
        org = owner.personal_organization()
        member = User.objects.create_user(f"member-{unique}@example.com", "a long password 1")
        Membership.objects.create(organization=org, user=member, role="member")
        server = import_definition(server_definition(f"dp-{unique}"), org)
        return owner, org, member, server

    return committed(make)


@pytest.fixture
def heard():
    calls = []

    def receiver(sender, **kwargs):
        calls.append((sender, kwargs))

    def broken(sender, **kwargs):
        raise RuntimeError("a connected-accounts receiver that fails")

    member_deprovisioned.connect(broken, weak=False)
    member_deprovisioned.connect(receiver, weak=False)
    yield calls
    member_deprovisioned.disconnect(receiver)
    member_deprovisioned.disconnect(broken)


def test_the_hook_is_sent_after_commit_with_the_organization_the_person_and_why(
    team, heard, committed
):
    owner, org, member, _ = team
    committed(
        lambda: services.membership_remove(
            actor=owner, membership=member.memberships.get(organization=org)
        )
    )
    # A receiver that raises does not keep the others from hearing it.
    assert heard == [
        (
            Membership,
            {
                "signal": member_deprovisioned,
                "organization": org,
                "user": member,
                "reason": "member.remove",
            },
        )
    ]
    row = committed(
        lambda: AuditEvent.objects.filter(organization_id=org.pk, action="member.deprovision").get()
    )
    assert row.target_label == member.email


def test_nothing_is_sent_when_the_removal_is_rolled_back(team, heard, db):
    owner, org, member, _ = team
    from django.db import transaction

    with transaction.atomic():
        member_deprovision(organization=org, user=member, reason="scim.deactivate")
        transaction.set_rollback(True)
    assert heard == []
    assert Membership.objects.filter(organization=org, user=member).exists()


def test_the_last_owner_cannot_be_deprovisioned(team, db):
    owner, org, _, _ = team
    with pytest.raises(ValueError, match="at least one owner"):
        member_deprovision(organization=org, user=owner, reason="scim.deactivate")
    assert Membership.objects.filter(organization=org, user=owner, role="owner").exists()


def test_revoke_keys_revokes_only_the_persons_keys_in_that_organization(team, committed):
    owner, org, member, _ = team

    def setup():
        mine, _ = ApiKey.issue(org, "mine", created_by=member)
        owners, _ = ApiKey.issue(org, "owner's", created_by=owner)
        elsewhere, _ = ApiKey.issue(member.personal_organization(), "own org", created_by=member)
        member_deprovision(organization=org, user=member, reason="scim.delete", revoke_keys=True)
        return [
            ApiKey.objects.get(pk=k.pk).revoked_at is not None for k in (mine, owners, elsewhere)
        ]

    assert committed(setup) == [True, False, False]


@pytest.fixture
def _database_for_the_consumer(live_database, django_db_blocker):
    with django_db_blocker.unblock():
        yield


async def test_an_inspector_socket_of_a_removed_member_closes_at_once(
    team, committed, _database_for_the_consumer
):
    owner, org, member, server = team

    def cookie():
        client = Client()
        client.force_login(member)
        return client.cookies["sessionid"].value

    session = await asyncio.to_thread(committed, cookie)
    headers = [
        (b"host", b"localhost"),
        (b"origin", b"http://localhost"),
        (b"cookie", f"sessionid={session}".encode()),
    ]
    communicator = WebsocketCommunicator(application, f"/ws/inspector/{server.slug}/", headers)
    assert (await communicator.connect(timeout=5))[0]
    await communicator.receive_json_from(timeout=5)
    await asyncio.to_thread(
        committed,
        lambda: services.membership_remove(
            actor=owner, membership=Membership.objects.get(organization=org, user=member)
        ),
    )
    # Well before the periodic check (REFRESH_SECONDS): the removal is announced.
    assert REFRESH_SECONDS >= 3
    closed = await communicator.receive_output(timeout=1.0)
    assert closed == {"type": "websocket.close", "code": CLOSE_REFUSED}
    await communicator.disconnect()
