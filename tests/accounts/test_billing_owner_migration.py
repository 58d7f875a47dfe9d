"""The data step of 0006_organization_billing_owner: each existing organization's paying account
is its longest-standing owner (not a member, not a later owner)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("accounts", "0005_governance_access_quotas")]
AFTER = [("accounts", "0006_organization_billing_owner")]


@pytest.mark.django_db(transaction=True)
def test_existing_organizations_are_paid_for_by_their_longest_standing_owner():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("accounts", "User")
    Organization = old.get_model("accounts", "Organization")
    Membership = old.get_model("accounts", "Membership")

    member, first, later = (User.objects.create(email=f"{n}@example.com") for n in "mfl")
    team = Organization.objects.create(name="team", slug="billing-team")
    Membership.objects.create(organization=team, user=member, role="member")
    Membership.objects.create(organization=team, user=first, role="owner")
    Membership.objects.create(organization=team, user=later, role="owner")
    ownerless = Organization.objects.create(name="nobody", slug="billing-nobody")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("accounts", "Organization")
    assert new.objects.get(pk=team.pk).billing_owner_id == first.pk
    assert new.objects.get(pk=ownerless.pk).billing_owner_id is None

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
