"""A task row keeps who submitted it, and a real Celery worker runs it as that caller, with the
role checked again: never wider than at submission.

The role changes in the transaction that submits the task, so it is in place before any worker
can see the task (create_task hands the task out on commit)."""

import pytest
from django.db import transaction

from accounts.models import Membership, ServiceAccount, User
from mcp_protocol.caller import Caller
from mcptasks.lifecycle import create_task
from mcptasks.models import Task
from mcptasks.principal import submitted
from servers.definition import import_definition
from servers.publishing import publish
from servers.snapshot import clear_cache, load_snapshot
from tests.celery_workers import SharedWorker, running_workers

from .conftest import tasks_definition, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("clean_redis")]


@pytest.fixture(scope="module")
def shared_worker(django_db_setup, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("workers")) as start:
        yield SharedWorker(start)


@pytest.fixture
def a_worker(shared_worker):
    return shared_worker.alive()


@pytest.fixture
def limited(org, user):
    """A server whose viewers may call `greet` alone; members and above may call every tool."""
    definition = {**tasks_definition("tasks-roles"), "roleAccess": {"viewer": {"tools": ["greet"]}}}
    server = import_definition(definition, org, user=user)
    publish(server)
    clear_cache()
    snapshot = load_snapshot(server.slug)
    assert snapshot is not None and snapshot.role_scopes
    return snapshot


@pytest.fixture
def member(org):
    person = User.objects.create_user("bob@example.com", "a long enough passphrase")
    Membership.objects.create(organization=org, user=person, role=Membership.MEMBER)
    return person


def person_caller(org, person, role, *, client="") -> Caller:
    return Caller(
        organization_id=org.pk,
        principal="person",
        principal_id=person.pk,
        role=role,
        credential_kind="oauth" if client else "api_key",
        credential_id=41,
        credential_name="" if client else "laptop",
        client=client,
    )


def ended(task) -> Task:
    wait_until(lambda: Task.objects.get(pk=task.pk).is_terminal, what="the task's end")
    return Task.objects.get(pk=task.pk)


def test_a_task_row_keeps_the_caller_who_submitted_it(a_worker, limited, org, member):
    caller = person_caller(org, member, "member", client="Claude")
    task = create_task(limited, "greet", {"name": "Ann"}, caller, None)
    row = ended(task)
    assert row.status == Task.COMPLETED
    assert (row.credential, row.principal, row.principal_id, row.role) == (
        "grant:41",
        "person",
        member.pk,
        "member",
    )
    assert (row.credential_kind, row.credential_id, row.client) == ("oauth", 41, "Claude")
    assert submitted(row) == caller


def test_a_person_whose_role_was_lowered_runs_with_the_lower_role(a_worker, limited, org, member):
    with transaction.atomic():
        task = create_task(limited, "slow_compute", {"ms": 1}, person_caller(org, member, "member"))
        Membership.objects.filter(user=member).update(role=Membership.VIEWER)
    row = ended(task)
    assert row.status == Task.FAILED
    assert row.error["message"] == "Unknown tool: slow_compute"


def test_a_raised_role_does_not_widen_the_run(a_worker, limited, org, member):
    Membership.objects.filter(user=member).update(role=Membership.VIEWER)
    viewer = person_caller(org, member, "viewer")
    with transaction.atomic():
        # Submitted as a viewer (the pipeline would not have offered the tool; the row is what
        # the worker trusts), then made an owner before the run.
        task = create_task(limited, "slow_compute", {"ms": 1}, viewer)
        Membership.objects.filter(user=member).update(role=Membership.OWNER)
    row = ended(task)
    assert row.status == Task.FAILED
    assert row.error["message"] == "Unknown tool: slow_compute"


def test_a_person_who_left_the_organization_gets_no_run(a_worker, limited, org, member):
    with transaction.atomic():
        task = create_task(limited, "greet", {"name": "Ann"}, person_caller(org, member, "member"))
        Membership.objects.filter(user=member).delete()
    row = ended(task)
    assert row.status == Task.FAILED
    assert row.error["data"] == {"reason": "principal-gone"}


def test_a_disabled_service_account_s_task_gets_no_run(a_worker, limited, org, user):
    account = ServiceAccount.objects.create(organization=org, name="ci", role="admin")
    caller = Caller(
        organization_id=org.pk,
        principal="service_account",
        principal_id=account.pk,
        role="admin",
        credential_kind="api_key",
        credential_id=7,
        credential_name="ci key",
    )
    kept = create_task(limited, "greet", {"name": "CI"}, caller, None)
    assert ended(kept).status == Task.COMPLETED
    with transaction.atomic():
        task = create_task(limited, "greet", {"name": "CI"}, caller, None)
        ServiceAccount.objects.filter(pk=account.pk).update(disabled_at=account.created_at)
    row = ended(task)
    assert row.status == Task.FAILED
    assert row.error["data"] == {"reason": "principal-gone"}
