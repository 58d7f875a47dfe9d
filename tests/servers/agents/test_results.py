"""Kept results in Redis: capped per organization (oldest evicted, too large refused), read in
pages by the same server and credential only."""

import pytest

from infra.redis import async_client
from servers.agents import results


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
