"""The harness itself: each fault it offers really happens, and each recovery really recovers."""

import time

import redis

from .conftest import TENANTS
from .harness import answer_of, mcp_call, seed_tenant


def test_an_append_only_redis_comes_back_from_kill_9_with_its_data(fault_redis):
    fault_redis.client().set("kept", "yes")
    fault_redis.kill()
    assert not fault_redis.ping()
    fault_redis.start()
    assert fault_redis.client().get("kept") == b"yes"


def test_a_frozen_redis_accepts_connections_but_never_answers(fault_redis):
    fault_redis.freeze()
    try:
        client = redis.Redis.from_url(fault_redis.url(), socket_timeout=0.3)
        started = time.monotonic()
        try:
            client.ping()
            raise AssertionError("a frozen Redis answered")
        except redis.TimeoutError:
            pass
        assert time.monotonic() - started < 2
    finally:
        fault_redis.thaw()
    assert fault_redis.ping()


def test_a_private_postgres_survives_an_immediate_stop_with_its_committed_rows(
    fault_postgres, fault_database, private_django, fault_redis
):
    name = fault_database.rsplit("/", 1)[1]
    fault_postgres.psql("CREATE TABLE marker (id int)", database=name)
    fault_postgres.psql("INSERT INTO marker VALUES (7)", database=name)
    fault_postgres.stop(mode="immediate")
    assert not fault_postgres.accepts_connections()
    fault_postgres.start()
    assert fault_postgres.psql("SELECT id FROM marker", database=name) == "7"
    # The template was migrated: the app's tables are there.
    count = private_django(
        "from accounts.models import User\nresult = User.objects.count()",
        database_url=fault_database,
        redis_url=fault_redis.url(),
    )
    assert count == TENANTS  # the seeded tenants' users


def test_a_live_server_serves_a_seeded_tenant_from_the_private_services(
    fault_database, fault_redis, start_server
):
    tenant = seed_tenant(database_url=fault_database, redis_url=fault_redis.url())
    server = start_server(database_url=fault_database, redis_url=fault_redis.url())
    answer = answer_of(mcp_call(server.url, tenant["slug"], tenant["key"]))
    assert answer["result"]["content"][0]["text"] == "You said hi"
    # The server's state went to the private Redis, not the shared one.
    assert fault_redis.client().dbsize() > 0
