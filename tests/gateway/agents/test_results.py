"""Kept results in Redis: capped per organization (oldest evicted, too large refused), read in
pages by the same server and credential only."""

import pytest

from gateway.agents import results
from infra.redis import async_client


@pytest.fixture
def capped(settings):
    settings.RESULT_STORE_MAX_CHARS_PER_ORG = 1000


async def keep(redis, text: str, org: int = 1, credential: str = "key:1") -> str | None:
    return await results.store(
        redis, org_id=org, server_id=7, credential=credential, text=text, page_chars=300, ttl=60
    )


async def read(redis, result_id, page=1, credential="key:1", server_id=7):
    uri = results.page_uri(result_id, page)
    return await results.read_page(redis, uri, server_id=server_id, credential=credential)


async def test_the_oldest_results_of_an_organization_are_evicted_to_stay_under_its_cap(capped):
    redis = async_client()
    first, second, third = [await keep(redis, c * 400) for c in "abc"]
    assert await read(redis, first) is None
    assert (await read(redis, second))["contents"][0]["text"] == "b" * 300
    assert (await read(redis, third, page=2))["contents"][0]["text"] == "c" * 100
    # Another organization's results do not count against this one's cap.
    assert await read(redis, await keep(redis, "d" * 900, org=2)) is not None
    assert await read(redis, second) is not None


async def test_a_result_larger_than_the_whole_cap_is_not_kept(capped):
    assert await keep(async_client(), "x" * 1001) is None


async def test_pages_are_read_only_by_the_same_server_and_credential():
    redis = async_client()
    result_id = await keep(redis, "abcdef" * 100)
    page = await read(redis, result_id, page=2)
    assert page["contents"][0]["text"] == ("abcdef" * 100)[300:600]
    assert page["contents"][0]["_meta"] == {"getmcp/page": 2, "getmcp/pages": 2}
    assert await read(redis, result_id, page=3) is None
    assert await read(redis, result_id, credential="key:2") is None
    assert await read(redis, result_id, server_id=8) is None
    assert results.parse_uri("getmcp://results/abc?page=x") is None
    assert results.parse_uri("getmcp://results/abc") == ("abc", 1)


async def keep_for(redis, text: str, *, org: int, owner: int | None) -> str | None:
    return await results.store(
        redis,
        org_id=org,
        owner_id=owner,
        server_id=7,
        credential="key:1",
        text=text,
        page_chars=300,
        ttl=60,
    )


async def test_one_persons_organizations_share_that_persons_cap(settings):
    """Organizations are free: three of one person keep what one person may, not three times it."""
    settings.RESULT_STORE_MAX_CHARS_PER_ORG = 1000
    settings.RESULT_STORE_MAX_CHARS_PER_OWNER = 1500
    redis = async_client()
    owner = 9001
    first = await keep_for(redis, "a" * 600, org=91, owner=owner)
    second = await keep_for(redis, "b" * 600, org=92, owner=owner)
    # A third organization of the same person: the oldest result of the first one makes room.
    third = await keep_for(redis, "c" * 600, org=93, owner=owner)
    assert await read(redis, first) is None
    assert await read(redis, second) is not None and await read(redis, third) is not None
    assert await redis.zcard("mcp:results:org:91") == 0
    total = sum(
        int(member.rsplit(b":", 1)[1])
        for member in await redis.zrange(f"mcp:results:owner:{owner}", 0, -1)
    )
    assert total == 1200
    # Another person's organization is not touched.
    assert await read(redis, await keep_for(redis, "d" * 900, org=94, owner=owner + 1)) is not None
    assert await read(redis, second) is not None
    # A result larger than the person's whole cap is not kept at all.
    settings.RESULT_STORE_MAX_CHARS_PER_ORG = 5000
    assert await keep_for(redis, "x" * 1501, org=95, owner=owner) is None


async def test_an_organizations_own_eviction_is_counted_off_its_persons_total(settings):
    settings.RESULT_STORE_MAX_CHARS_PER_ORG = 1000
    settings.RESULT_STORE_MAX_CHARS_PER_OWNER = 10_000
    redis = async_client()
    owner = 8001
    ids = [await keep_for(redis, c * 600, org=81, owner=owner) for c in "abc"]
    assert [await read(redis, i) is not None for i in ids] == [False, False, True]
    members = await redis.zrange(f"mcp:results:owner:{owner}", 0, -1)
    assert [member.split(b":")[1].decode() for member in members] == [ids[2]]
