"""The data step of 0003_personal_organization: existing users get today's personal
organization, preferring one they own (so a user already pulled into an attacker's older
organization gets their own back)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("accounts", "0002_initial")]
AFTER = [("accounts", "0003_personal_organization")]


@pytest.mark.django_db(transaction=True)
def test_existing_users_get_the_oldest_organization_they_own_as_their_personal_one():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("accounts", "User")
    Organization = old.get_model("accounts", "Organization")
    Membership = old.get_model("accounts", "Membership")

    attacker_org = Organization.objects.create(name="attacker", slug="attacker-org")
    victim = User.objects.create(email="victim@example.com")
    victims_own = Organization.objects.create(name="victim", slug="victim-org")
    Membership.objects.create(organization=victims_own, user=victim, role="owner")
    Membership.objects.create(organization=attacker_org, user=victim, role="member")
    guest = User.objects.create(email="guest@example.com")
    Membership.objects.create(organization=attacker_org, user=guest, role="member")
    User.objects.create(email="loner@example.com")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("accounts", "User")
    assert new.objects.get(email="victim@example.com").personal_org_id == victims_own.pk
    assert new.objects.get(email="guest@example.com").personal_org_id == attacker_org.pk
    assert new.objects.get(email="loner@example.com").personal_org_id is None

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
