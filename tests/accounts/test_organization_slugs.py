"""Organization slugs are chosen in one place (Organization.create_with_free_slug): the unique
constraint decides, so concurrent creations never pass a check together and then collide."""

import threading

import pytest
from django.db import connection

from accounts import services
from accounts.models import Organization, User


def test_organizations_named_alike_get_numbered_slugs(user):
    slugs = [services.organization_create(user=user, name="Acme").organization.slug for _ in "abc"]
    assert slugs == ["acme", "acme-2", "acme-3"]


def test_a_personal_organization_whose_slug_is_taken_gets_a_random_suffix(db):
    Organization.objects.create(name="squatter", slug="grace")
    user = User.objects.create_user("grace@example.com", "a long enough passphrase")
    slug = user.personal_organization().slug
    assert slug.startswith("grace-") and len(slug) == len("grace-") + 6


def test_a_taken_slug_is_retried_on_the_constraint_not_checked_before(user, monkeypatch):
    Organization.objects.create(name="first", slug="beta")
    checks = []
    real_filter = Organization.objects.filter

    def counting_filter(*args, **kwargs):
        checks.append(kwargs)
        return real_filter(*args, **kwargs)

    monkeypatch.setattr(Organization.objects, "filter", counting_filter)
    org = Organization.create_with_free_slug(name="Beta", base="beta")
    assert org.slug == "beta-2"
    # Looked up once, only to tell a slug clash from another failed constraint.
    assert checks == [{"slug": "beta"}]


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_of_one_name_all_succeed_with_distinct_slugs():
    users = [User.objects.create_user(f"racer{n}@example.com", "long passphrase") for n in range(4)]
    start, made, failed = threading.Barrier(len(users)), [], []

    def create(user):
        try:
            start.wait(5)
            made.append(services.organization_create(user=user, name="Race").organization.slug)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=create, args=(u,)) for u in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failed == []
    assert sorted(made) == ["race", "race-2", "race-3", "race-4"]
