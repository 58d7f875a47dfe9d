"""Tool calls of organizations under no monthly quota, counted in the process and pushed to their
monthly counter in Redis with the call log (recorder.py's flusher, once a second).

An organization with a quota has its calls counted by the quota's own Lua script, which must
see the count before it admits a call. One without a quota still wants the Usage page to tell
the truth (people read it for billing), but a Redis round trip on every warm call would buy
nothing: nobody is refused on that number. So the hot path appends to a deque, and the
flusher thread adds the sums to the same counters (`mcp:q:{o<org>}:<YYYYMM>`) the quota
script uses, so a quota set in the middle of a month starts from the calls already made.

What a process can lose is what the call log can lose: a SIGKILL drops up to a second of
counts; an orderly exit pushes them with the rows.
"""

from collections import deque

# (counter key, calls, ttl) per counted request: deque.append is atomic and the cheapest thing a
# hot path can do; the flusher sums them up (a dict under a lock cost twice as much per call).
_pending: deque = deque()


# count((key, calls, ttl)): `calls` more on the counter `key`, which expires `ttl` seconds after
# its last push. The deque's own append, so the hot path pays one C call and no Python frame.
# Every counted call is also recorded (recorder.record_call), which keeps the flusher running.
count = _pending.append


def add(key: str, calls: int, ttl: int) -> None:
    count((key, calls, ttl))


def take() -> dict[str, tuple[int, int]]:
    """Everything counted since the last take, summed: {key: (calls, ttl)}."""
    counts: dict[str, tuple[int, int]] = {}
    try:
        while True:
            key, calls, ttl = _pending.popleft()
            counts[key] = (counts.get(key, (0, 0))[0] + calls, ttl)
    except IndexError:
        pass
    return counts


def give_back(counts: dict[str, tuple[int, int]]) -> None:
    """Counts a push could not deliver, kept for the next one."""
    for key, (calls, ttl) in counts.items():
        add(key, calls, ttl)


def push(client, counts: dict[str, tuple[int, int]]) -> None:
    """One pipeline for every counter: INCRBY and EXPIRE. The expiry is renewed on each push
    (a month's counter then lives its TTL past the month's last push, which is as long as it is
    read); EXPIRE NX would keep the first one but needs Redis 7."""
    if not counts:
        return
    pipe = client.pipeline(transaction=False)
    for key, (calls, ttl) in counts.items():
        pipe.incrby(key, calls)
        pipe.expire(key, ttl)
    pipe.execute()


def forget() -> None:
    """A forked child starts with nothing counted (its parent pushes its own)."""
    _pending.clear()
