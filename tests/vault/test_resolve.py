import pytest
from asgiref.sync import async_to_sync

from servers.models import Server
from vault.masking import MASK, Masker
from vault.models import Secret
from vault.resolve import asecrets_for, secrets_for


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="weather", name="weather")


def test_a_server_sees_organization_secrets_overridden_by_its_own(org, server):
    other = Server.objects.create(organization=org, slug="other", name="other")
    Secret.store(org, "TOKEN", "org-token")
    Secret.store(org, "REGION", "eu")
    Secret.store(org, "TOKEN", "server-token", server=server)
    Secret.store(org, "ONLY_OTHER", "x", server=other)
    values = secrets_for(org.pk, server.pk)
    assert dict(values) == {"TOKEN": "server-token", "REGION": "eu"}


def test_no_organization_sees_another_ones_secrets(org, outsider_org):
    Secret.store(org, "TOKEN", "mine")
    assert dict(secrets_for(outsider_org.pk, None)) == {}


def test_test_runs_get_test_values(org, server):
    Secret.store(org, "TOKEN", "live", test_value="sandbox")
    assert secrets_for(org.pk, server.pk, test=True)["TOKEN"] == "sandbox"
    assert secrets_for(org.pk, server.pk)["TOKEN"] == "live"


def test_the_mapping_never_shows_its_values(org, server):
    Secret.store(org, "TOKEN", "super-secret-value")
    values = secrets_for(org.pk, server.pk)
    assert "super-secret-value" not in repr(values)
    assert "super-secret-value" not in str(values)
    assert "TOKEN" in repr(values)


def test_the_async_resolver_caches_until_a_secret_changes(org, server, django_assert_num_queries):
    Secret.store(org, "TOKEN", "one")
    assert async_to_sync(asecrets_for)(org.pk, server.pk)["TOKEN"] == "one"
    with django_assert_num_queries(0):
        assert async_to_sync(asecrets_for)(org.pk, server.pk)["TOKEN"] == "one"
    Secret.store(org, "TOKEN", "two")
    assert async_to_sync(asecrets_for)(org.pk, server.pk)["TOKEN"] == "two"
    Secret.objects.filter(organization=org).delete()
    assert dict(async_to_sync(asecrets_for)(org.pk, server.pk)) == {}


def test_the_masker_hides_every_value_and_its_url_encoded_forms():
    masker = Masker(["p@ss word/1", "tok_123"])
    text = (
        "Authorization: Bearer tok_123 url=/x?key=p%40ss%20word%2F1&k2=p%40ss+word%2F1 p@ss word/1"
    )
    masked = masker.mask(text)
    assert "tok_123" not in masked and "p@ss" not in masked and "p%40ss" not in masked
    assert masked.count(MASK) == 4


def test_the_masker_walks_structures_and_leaves_short_values_alone():
    masker = Masker(["ab", "longer-secret"])
    data = {"h": ["x longer-secret y"], "longer-secret": 1, "n": 5, "ab": "ab"}
    assert masker.mask_data(data) == {"h": [f"x {MASK} y"], MASK: 1, "n": 5, "ab": "ab"}
    assert masker.add("about").mask("about it") == f"{MASK} it"


def test_the_cache_keeps_the_most_recently_used_values_within_its_size(
    org, monkeypatch, settings, django_assert_num_queries
):
    from cachetools import LRUCache

    from vault import resolve

    assert resolve._cache.maxsize == settings.VAULT_CACHE_SIZE
    monkeypatch.setattr(resolve, "_cache", LRUCache(2))
    servers = [
        Server.objects.create(organization=org, slug=f"vault-lru-{n}", name=f"s{n}")
        for n in range(3)
    ]
    Secret.store(org, "TOKEN", "one")
    for server in servers:
        assert async_to_sync(asecrets_for)(org.pk, server.pk)["TOKEN"] == "one"
    assert len(resolve._cache) == 2
    with django_assert_num_queries(0):  # the two most recent are still cached
        assert async_to_sync(asecrets_for)(org.pk, servers[2].pk)["TOKEN"] == "one"
    # The first was evicted: read again from the database, with the same value.
    with django_assert_num_queries(1):
        assert async_to_sync(asecrets_for)(org.pk, servers[0].pk)["TOKEN"] == "one"
