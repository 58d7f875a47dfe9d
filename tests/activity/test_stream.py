import fakeredis

from activity import stream

from .conftest import queued


def rows(count: int) -> list[dict]:
    return [{"uid": f"{n:032x}", "n": n} for n in range(count)]


def test_rows_pushed_in_several_chunks_arrive_each_as_its_own_entry_in_order(call_queue):
    stream.append(call_queue, rows(stream.CHUNK_ROWS * 2 + 5))
    assert [row["n"] for row in queued(call_queue)] == list(range(stream.CHUNK_ROWS * 2 + 5))


def test_the_stream_stays_near_its_cap(call_queue, settings):
    settings.CALL_LOG_STREAM_MAX_ROWS = 100
    stream.append(call_queue, rows(1000))
    assert call_queue.xlen(stream.STREAM_KEY) < 1000
    assert queued(call_queue)[-1]["n"] == 999


def test_embedded_redis_takes_the_same_entries_without_lua():
    client = fakeredis.FakeRedis()
    stream.append(client, rows(3))
    assert [row["n"] for row in queued(client)] == [0, 1, 2]
