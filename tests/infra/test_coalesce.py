"""Commands asked by many tasks at once leave together: a few pipelines, each reply (or error)
back to the task that asked."""

import asyncio

import pytest
import redis

from infra import coalesce
from infra.coalesce import Coalescer
from infra.redis import async_client


async def test_commands_asked_in_the_same_turn_leave_as_one_pipeline(unique):
    client = async_client()
    batch = Coalescer(client)
    key = f"coalesce:{unique}"
    await client.set(key, "here")
    replies = await asyncio.gather(*(batch.execute("EXISTS", key) for _ in range(500)))
    assert replies == [1] * 500
    assert batch.batches == 1
    await client.delete(key)


async def test_more_commands_than_a_chunk_go_out_in_several_pipelines(unique, monkeypatch):
    monkeypatch.setattr(coalesce, "CHUNK", 100)
    batch = Coalescer(async_client())
    key = f"coalesce:{unique}"
    replies = await asyncio.gather(*(batch.execute("INCR", key) for _ in range(350)))
    assert sorted(replies) == list(range(1, 351))
    assert batch.batches == 4
    await async_client().delete(key)


async def test_a_failing_command_fails_only_its_asker(unique):
    client = async_client()
    batch = Coalescer(client)
    key = f"coalesce:{unique}"
    await client.set(key, "a string")
    good, bad = await asyncio.gather(
        batch.execute("GET", key), batch.execute("XREAD", "STREAMS", key, "0-0"),
        return_exceptions=True,
    )  # fmt: skip
    assert good == b"a string"
    assert isinstance(bad, redis.ResponseError)
    await client.delete(key)


async def test_an_asker_that_went_away_does_not_break_the_others(unique):
    batch = Coalescer(async_client())
    key = f"coalesce:{unique}"
    leaving = asyncio.ensure_future(batch.execute("SET", key, "1"))
    staying = asyncio.ensure_future(batch.execute("EXISTS", key))
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert await staying in (0, 1)
    await async_client().delete(key)


async def test_a_shared_question_asked_by_many_is_sent_once_per_batch(unique):
    client = async_client()
    batch = Coalescer(client)
    key = f"coalesce:{unique}"
    await client.hset(key, "field", "value")
    # A command nothing else of the platform sends, so the server's count is this test's.
    before = (await client.info("commandstats")).get("cmdstat_hstrlen", {}).get("calls", 0)
    asks = (batch.execute("HSTRLEN", key, "field", shared=True) for _ in range(300))
    replies = await asyncio.gather(*asks)
    after = (await client.info("commandstats")).get("cmdstat_hstrlen", {}).get("calls", 0)
    assert replies == [5] * 300
    assert after - before == 1
    await client.delete(key)


async def test_an_asker_of_a_shared_question_that_went_away_leaves_the_others_answered(unique):
    client = async_client()
    batch = Coalescer(client)
    key = f"coalesce:{unique}"
    await client.set(key, "shared")
    first = asyncio.ensure_future(batch.execute("GET", key, shared=True))
    leaving = asyncio.ensure_future(batch.execute("GET", key, shared=True))
    last = asyncio.ensure_future(batch.execute("GET", key, shared=True))
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert await first == b"shared"
    assert await last == b"shared"
    await client.delete(key)


async def test_a_failing_shared_command_fails_every_one_of_its_askers(unique):
    client = async_client()
    batch = Coalescer(client)
    key = f"coalesce:{unique}"
    await client.set(key, "a string")
    replies = await asyncio.gather(
        *(batch.execute("XREAD", "STREAMS", key, "0-0", shared=True) for _ in range(3)),
        return_exceptions=True,
    )
    assert all(isinstance(reply, redis.ResponseError) for reply in replies)
    await client.delete(key)
