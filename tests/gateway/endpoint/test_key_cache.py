"""The per-process cache of bearer-token digests: bounded, least recently used out first."""

from gateway.endpoint.auth import ANONYMOUS, Credential, KeyCache


def credential(n: int) -> Credential:
    return Credential(n, 1, f"key {n}", frozenset(), None, False, "0")


def test_its_size_comes_from_settings(settings):
    settings.KEY_CACHE_SIZE = 7
    assert KeyCache().size == 7


def test_it_drops_the_least_recently_used_known_digest_past_its_size():
    cache = KeyCache(size=2)
    cache.put("a", credential(1))
    cache.put("b", credential(2))
    assert cache.get("a") == credential(1)  # "a" is now the most recent
    cache.put("c", credential(3))
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (credential(1), credential(3))


def test_unknown_digests_are_bounded_apart_from_known_ones():
    cache = KeyCache(size=2)
    cache.put("known", ANONYMOUS)
    for digest in ("x", "y", "z"):
        cache.put(digest, None)
    assert not cache.is_unknown("x")
    assert cache.is_unknown("y") and cache.is_unknown("z")
    assert cache.get("known") is ANONYMOUS
    assert len(cache) == 3


def test_a_dropped_or_cleared_digest_is_loaded_again():
    cache = KeyCache(size=2)
    cache.put("a", credential(1))
    cache.put("gone", None)
    cache.drop("a")
    assert cache.get("a") is None
    cache.clear()
    assert not cache.is_unknown("gone")
