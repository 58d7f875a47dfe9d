"""infra/broker.py: a channel of the broker's Redis transport keeps working for the messages it
holds after Celery's `Connection.collect()` detached its transport (a lost connection), so a
worker neither crashes restoring them nor fails to acknowledge a task that ends afterwards.
tests/faults/test_broker_restart.py shows the same with a real worker and a real restart."""

import uuid

import pytest
from django.conf import settings
from kombu import Connection, Exchange, Queue

from infra.broker import Transport
from infra.redis import sync_client


@pytest.fixture
def queue():
    name = f"broker-test-{uuid.uuid4().hex[:8]}"
    yield Queue(name, Exchange(name), routing_key=name)
    sync_client().delete(name)


def held_message(connection: Connection, queue: Queue):
    """A message taken from `queue` and not acknowledged: kept in Redis's unacked index."""
    with connection.Producer() as producer:
        producer.publish({"n": 1}, exchange=queue.exchange, routing_key=queue.routing_key,
                         declare=[queue])  # fmt: skip
    message = queue(connection.default_channel).get(no_ack=False)
    assert message is not None
    return message


def held(message) -> bool:
    return bool(sync_client().hexists("unacked", message.delivery_tag))


def detach(connection: Connection) -> None:
    """What a lost connection leaves: `Connection.collect()` detached the transport from its
    client, and the channel's close dropped its connection pools (the first thing it does; it
    restores the held messages only after, and with Redis still away that fails and leaves
    them in the unacked index, for the task's own ack to remove when it ends)."""
    connection.transport.client = None
    connection.default_channel._disconnect_pools()


@pytest.fixture
def connection():
    with Connection(settings.REDIS_URL, transport=Transport) as connection:
        yield connection


def test_a_detached_channel_puts_its_unacknowledged_message_back_when_it_closes(connection, queue):
    message = held_message(connection, queue)
    assert held(message)
    channel = message.channel
    detach(connection)
    channel.close()  # kombu's own channel: AttributeError: 'NoneType' has no 'hostname'
    assert not held(message)
    assert sync_client().llen(queue.name) == 1  # back in its queue, to be delivered again


def test_a_detached_channel_still_acknowledges_a_task_that_ends_afterwards(connection, queue):
    message = held_message(connection, queue)
    detach(connection)
    message.ack()
    assert not held(message)
    assert sync_client().llen(queue.name) == 0


def test_the_stock_kombu_channel_is_what_fails_there(queue):
    # The reason for infra/broker.py: if kombu ever fixes this, the class can go.
    with Connection(settings.REDIS_URL, transport="redis") as connection:
        message = held_message(connection, queue)
        detach(connection)
        with pytest.raises(AttributeError, match="hostname"):
            message.ack()
        # Put the transport back so that the message can be let go of.
        connection.transport.client = connection
        message.ack()


@pytest.fixture(scope="module")
def watched_redis():
    from tests.scale.redis_sentinel import RedisSentinelForTests

    watched = RedisSentinelForTests().start()
    yield watched
    watched.close()


def test_a_detached_sentinel_channel_still_acknowledges_and_puts_back_its_messages(
    watched_redis, queue
):
    from infra.broker import SentinelTransport
    from tests.scale.redis_sentinel import MASTER_NAME

    master = watched_redis.master().client()
    options = {"master_name": MASTER_NAME}
    with Connection(
        watched_redis.url(), transport=SentinelTransport, transport_options=options
    ) as connection:
        acknowledged = held_message(connection, queue)
        returned = held_message(connection, queue)
        assert master.hexists("unacked", acknowledged.delivery_tag)
        detach(connection)
        acknowledged.ack()  # kombu's own: AttributeError: 'NoneType' has no 'hostname'
        assert not master.hexists("unacked", acknowledged.delivery_tag)
        returned.channel.close()
        assert not master.hexists("unacked", returned.delivery_tag)
        assert master.llen(queue.name) == 1  # back in its queue, to be delivered again
    master.delete(queue.name)


def test_the_stock_kombu_sentinel_channel_is_what_fails_there(watched_redis, queue):
    from kombu.transport.redis import SentinelTransport

    from tests.scale.redis_sentinel import MASTER_NAME

    options = {"master_name": MASTER_NAME}
    with Connection(
        # The class: the "sentinel" alias names infra/broker.py's since that module was imported.
        watched_redis.url(),
        transport=SentinelTransport,
        transport_options=options,
    ) as connection:
        message = held_message(connection, queue)
        detach(connection)
        with pytest.raises(AttributeError, match="hostname"):
            message.ack()
        connection.transport.client = connection
        message.ack()
    watched_redis.master().client().delete(queue.name)
