"""The paying account behind organizations: who it is, how it passes on, and the cap on how many
organizations one person may pay for, enforced wherever an organization is created."""

import threading

import pytest
from django.db import connection
from django.urls import reverse

from accounts import services
from accounts.billing import OrganizationLimitReached
from accounts.models import Membership, Organization, User


@pytest.fixture
def cap_of_three(settings):
    settings.ORGANIZATIONS_PER_PERSON = 3


def test_whoever_creates_an_organization_pays_for_it(user):
    assert user.personal_organization().billing_owner == user
    assert services.organization_create(user=user, name="Team").organization.billing_owner == user


def test_one_organization_more_than_a_person_may_pay_for_is_refused_naming_the_setting(
    user, cap_of_three
):
    user.personal_organization()
    services.organization_create(user=user, name="two")
    services.organization_create(user=user, name="three")
    with pytest.raises(OrganizationLimitReached) as refused:
        services.organization_create(user=user, name="four")
    assert "ORGANIZATIONS_PER_PERSON" in refused.value.messages[0]
    assert "already pay for 3 organizations" in refused.value.messages[0]
    assert Organization.objects.filter(billing_owner=user).count() == 3
    assert not Organization.objects.filter(name="four", memberships__user=user).exists()


def test_no_cap_when_the_setting_is_zero(user, settings):
    settings.ORGANIZATIONS_PER_PERSON = 0
    for n in range(12):
        services.organization_create(user=user, name=f"org {n}")
    assert Organization.objects.filter(billing_owner=user).count() == 13  # and the personal one


def test_the_dashboard_shows_the_cap_on_the_new_organization_form(client, user, cap_of_three):
    client.force_login(user)
    url = reverse("dashboard:organization_create")
    for name in ("two", "three"):
        assert client.post(url, {"name": name}).status_code == 302
    page = client.post(url, {"name": "four"})
    assert page.status_code == 200
    assert "ORGANIZATIONS_PER_PERSON" in page.content.decode()
    assert not Organization.objects.filter(name="four", memberships__user=user).exists()


def test_a_personal_organization_made_again_is_new_under_the_cap_and_an_own_one_at_it(
    user, cap_of_three
):
    personal = user.personal_organization()
    team = services.organization_create(user=user, name="team").organization
    # The personal organization passes to a teammate, who becomes its owner and paying account.
    mate = User.objects.create_user("mate@example.com", "a long enough passphrase")
    Membership.objects.create(organization=personal, user=mate, role=Membership.OWNER)
    services.membership_remove(actor=user, membership=personal.memberships.get(user=user))
    personal.refresh_from_db()
    assert personal.billing_owner == mate
    # Made again (the API, the dashboard and the commands all ask this): under the cap, a new one.
    user.refresh_from_db()
    fresh = user.personal_organization()
    assert fresh not in (personal, team) and fresh.billing_owner == user
    services.organization_create(user=user, name="three")
    # At the cap, with the personal one gone (a membership deleted by staff, say): the oldest
    # organization the person pays for and belongs to, not a fourth one.
    Membership.objects.filter(organization=fresh, user=user).delete()
    user.refresh_from_db()
    assert user.personal_organization() == team
    user.refresh_from_db()
    assert user.personal_org == team
    assert Organization.objects.filter(billing_owner=user).count() == 3


def test_the_paying_account_passes_to_the_longest_standing_other_owner(user):
    org = services.organization_create(user=user, name="team").organization
    first, second = (
        User.objects.create_user(f"{name}@example.com", "a long enough passphrase")
        for name in ("first", "second")
    )
    Membership.objects.create(organization=org, user=first, role=Membership.OWNER)
    Membership.objects.create(organization=org, user=second, role=Membership.OWNER)
    services.membership_change_role(
        actor=user, membership=org.memberships.get(user=user), role=Membership.MEMBER
    )
    org.refresh_from_db()
    assert org.billing_owner == first
    services.membership_remove(actor=first, membership=org.memberships.get(user=first))
    org.refresh_from_db()
    assert org.billing_owner == second


def test_passing_an_organization_to_an_owner_at_the_cap_is_refused(user, cap_of_three):
    org = services.organization_create(user=user, name="team").organization
    full = User.objects.create_user("full@example.com", "a long enough passphrase")
    full.personal_organization()
    services.organization_create(user=full, name="f2")
    services.organization_create(user=full, name="f3")
    Membership.objects.create(organization=org, user=full, role=Membership.OWNER)
    with pytest.raises(OrganizationLimitReached) as refused:
        services.membership_remove(actor=user, membership=org.memberships.get(user=user))
    assert "full@example.com already pays for 3" in refused.value.messages[0]
    assert org.memberships.filter(user=user).exists()
    org.refresh_from_db()
    assert org.billing_owner == user


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_at_the_cap_make_only_as_many_as_allowed(settings):
    settings.ORGANIZATIONS_PER_PERSON = 2
    racer = User.objects.create_user("racer@example.com", "a long enough passphrase")
    racer.personal_organization()
    start, made, refused = threading.Barrier(4), [], []

    def create(n):
        try:
            start.wait(5)
            made.append(services.organization_create(user=racer, name=f"race {n}"))
        except OrganizationLimitReached:
            refused.append(n)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(made) == 1 and len(refused) == 3
    assert Organization.objects.filter(billing_owner=racer).count() == 2
