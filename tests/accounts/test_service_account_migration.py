"""The data step of 0008: a key whose creator is unknown moves to a service account of its
organization with the member role (as such keys were judged before); personal keys stay
personal, and each organization gets its own account."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("accounts", "0007_service_accounts")]
AFTER = [("accounts", "0008_keys_without_creator_to_service_accounts")]


@pytest.mark.django_db(transaction=True)
def test_keys_without_a_creator_move_to_a_member_service_account_and_personal_keys_stay():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("accounts", "User")
    Organization = old.get_model("accounts", "Organization")
    ApiKey = old.get_model("accounts", "ApiKey")

    alice = User.objects.create(email="alice@example.com")
    one = Organization.objects.create(name="one", slug="migrate-one")
    two = Organization.objects.create(name="two", slug="migrate-two")
    personal = ApiKey.objects.create(organization=one, name="p", digest="a" * 64, created_by=alice)
    orphans = [
        ApiKey.objects.create(organization=org, name=f"o{i}", digest=str(i) * 64)
        for i, org in enumerate((one, one, two))
    ]

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps
    Key = new.get_model("accounts", "ApiKey")
    Account = new.get_model("accounts", "ServiceAccount")

    assert Key.objects.get(pk=personal.pk).service_account_id is None
    moved = {Key.objects.get(pk=k.pk).service_account_id for k in orphans[:2]}
    assert len(moved) == 1 and None not in moved
    account = Account.objects.get(pk=moved.pop())
    assert (account.organization_id, account.role) == (one.pk, "member")
    other = Account.objects.get(pk=Key.objects.get(pk=orphans[2].pk).service_account_id)
    assert other.organization_id == two.pk and other.pk != account.pk

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
