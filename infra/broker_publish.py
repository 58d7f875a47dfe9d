"""How long a message's publish to the broker keeps trying: across a Sentinel failover, then a
clean error (REDIS_SENTINEL_FAILOVER_SECONDS, as the state clients: infra/redis_failover.py).

kombu retries a publish that met a connection error (`Connection.ensure`, Celery's
`retry_policy`), but it only sleeps between attempts once it has tried every host of the URL,
and a `sentinel://` broker URL names each Sentinel as a host: with three, the retries ran back
to back, and Celery's default 3 of them failed a task's publish 0.01 s after the master died,
seconds before the Sentinels could promote a replica (tests/scale/test_redis_sentinel.py). A
larger count is no bound in time either. kombu calls the policy's `errback` after each failed
attempt with the pause it is about to take (0 within a round of hosts): the errback here pauses
when kombu would not, and ends the retries by raising once `seconds` have passed since the
publish began. Plain imports only (no settings).
"""

import math
import time
from typing import Any

# The pause between two attempts: a promoted replica is found within this of its promotion, and
# each waiting publish asks the Sentinels at most this often.
PAUSE_SECONDS = 0.5


def publish_retry_policy(*, seconds: float) -> dict[str, Any]:
    """Celery's `retry_policy` for one publish (its deadline starts now)."""
    deadline = time.monotonic() + seconds

    def pause_or_give_up(error: Exception, interval: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise error
        if not interval:  # kombu goes straight on to the next host
            time.sleep(min(PAUSE_SECONDS, left))

    return {
        # A backstop only: the deadline ends the retries first (each attempt pauses).
        "max_retries": math.ceil(seconds / PAUSE_SECONDS) + 10,
        "interval_start": 0,
        "interval_step": PAUSE_SECONDS,
        "interval_max": PAUSE_SECONDS,
        "errback": pause_or_give_up,
    }
