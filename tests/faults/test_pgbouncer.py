"""The platform behind PgBouncer in transaction mode (DATABASE_TRANSACTION_POOLING): migrations,
MCP calls from many clients over a pool of two server connections, the call log drained by a
real Celery worker, audit rows appended by several processes at once under the chain's
transaction-level advisory lock, and a CSV export that streams in chunks without a server-side
cursor. Every process reaches Postgres only through the pooler."""

import concurrent.futures
import uuid

import pytest

from tests.faults.harness import answer_of, django_script, mcp_call, run_manage, wait_until
from tests.faults.pgbouncer import PrivatePgBouncer

POOLED = {"DATABASE_TRANSACTION_POOLING": "true"}
POOL_SIZE = 2
DRAIN = "from activity.tasks import drain_call_log\ndrain_call_log.delay()"
CALLS = 40

APPEND_AUDIT = """
from audit.record import audit_record
for i in range({count}):
    audit_record(action="test.pooled", organization_id={org_id}, target_type="test",
                 target_id=str(i), target_label="pooled {tag}")
result = True
"""

EXPORT = """
from django.utils import timezone
from activity.models import CallLog
from activity.queries import csv_lines
org = CallLog.objects.values_list("organization_id", flat=True).first()
CallLog.objects.bulk_create([
    CallLog(at=timezone.now(), organization_id=org, server_slug="bulk", method="tools/call")
    for _ in range(4500)
])
result = sum(1 for _ in csv_lines(CallLog.objects.all())) - 1
"""


@pytest.fixture
def bouncer(fault_postgres):
    pooler = PrivatePgBouncer(target_port=fault_postgres.port, pool_size=POOL_SIZE).start()
    yield pooler
    pooler.close()


def test_the_platform_runs_behind_pgbouncer_in_transaction_mode(
    fault_postgres, bouncer, fault_redis, start_server, start_worker, tmp_path
):
    # Checkpoints of this database's chains only: another run's would not match it.
    pooled = {**POOLED, "AUDIT_CHECKPOINT_DIR": str(tmp_path / "checkpoints")}
    name = f"pooled_{uuid.uuid4().hex[:10]}"
    fault_postgres.create_database(name, migrate=False)
    url = bouncer.url(name)
    redis = fault_redis.url()
    # Every migration (functions, triggers, data steps) through the pooler.
    run_manage("migrate", "--noinput", database_url=url, redis_url=redis, extra_env=pooled)
    tenant = django_script(
        __import__("tests.faults.harness", fromlist=["SEED_TENANT"]).SEED_TENANT,
        database_url=url,
        redis_url=redis,
        extra_env=pooled,
    )
    server = start_server(database_url=url, redis_url=redis, extra_env=pooled)
    start_worker(database_url=url, redis_url=redis, env=pooled)

    # Eight clients at once over two server connections; the spare keys' first use reads
    # Postgres, so some calls load credentials while others run.
    keys = [tenant["key"], *tenant["spare_keys"]]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda i: mcp_call(server.url, tenant["slug"], keys[i % len(keys)], timeout=30),
                range(CALLS),
            )
        )
    assert [r.status_code for r in answers] == [200] * CALLS
    assert all("You said hi" in str(answer_of(r)["result"]) for r in answers)

    # The worker drains the call log into Postgres through the pooler too (asked here, as
    # beat would every few seconds).
    def logged() -> bool:
        django_script(DRAIN, database_url=url, redis_url=redis, extra_env=pooled)
        count = fault_postgres.psql("SELECT count(*) FROM activity_calllog", database=name)
        return int(count) == CALLS

    wait_until(logged, timeout=90, interval=1, what=f"{CALLS} call-log rows in Postgres")

    # Three processes append to one organization's audit chain at once; the chain stays whole.
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        done = pool.map(
            lambda tag: django_script(
                APPEND_AUDIT.format(count=15, org_id=tenant["org_id"], tag=tag),
                database_url=url,
                redis_url=redis,
                extra_env=pooled,
                timeout=120,
            ),
            "abc",
        )
        assert list(done) == [True] * 3
    appended = fault_postgres.psql(
        "SELECT count(*) FROM audit_auditevent WHERE action = 'test.pooled'", database=name
    )
    assert int(appended) == 45
    report = run_manage(
        "audit", "verify", database_url=url, redis_url=redis, extra_env=pooled, timeout=120
    )
    assert "broken" not in report.lower(), report

    # A CSV export larger than one chunk, without a cursor that outlives its transaction.
    exported = django_script(
        EXPORT, database_url=url, redis_url=redis, extra_env=pooled, timeout=120
    )
    assert exported == CALLS + 4500

    # The pooler multiplexed: Postgres never held more server connections to this database
    # than the pool, whatever the number of clients.
    config = {row[0]: row[1] for row in bouncer.show("CONFIG")}
    assert config["pool_mode"] == "transaction"
    servers = fault_postgres.psql(
        f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{name}'", database="postgres"
    )
    assert int(servers) <= POOL_SIZE
    stats = {row[0]: row for row in bouncer.show("STATS")}
    assert name in stats
