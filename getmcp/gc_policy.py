"""The web process's cyclic garbage collector: tuned for many long-lived objects beside calls.

Why (measured with `bench/streams.py --streams 10000` and gc.callbacks timing, docs/scaling.md):
ten thousand open streams are about 1.2 million GC-tracked objects (connection, protocol,
tasks, coroutine frames, futures, closures: ~120 a stream). CPython's default thresholds
(700, 10, 10) run a young collection every 700 net allocations; the objects of the calls in
flight at that moment (32 connections of wrk, each call a few hundred objects) survive two of
them and are promoted to the oldest generation, though refcounting frees them a moment later.
A full collection runs once those promotions exceed a quarter of the oldest generation, and
it walks every object, the streams' included: about 0.9 s of CPU each at 10,000 streams, five
of them in a 10 s run of calls. That, not the streams' own chores, was most of why CPU per
call rose from 0.31 to 0.46 ms with the streams open.

What:
- `gc.freeze()` once the application is loaded (at lifespan start-up): modules, settings,
  compiled regexes, Django's app registry (~150,000 objects) are never garbage and are no
  longer walked by any collection (and forked workers keep sharing their pages).
- The young threshold raised to YOUNG_THRESHOLD allocations: a call's objects are freed by
  refcounting long before a young collection sees them, so almost nothing of a call is
  promoted and full collections become rare (they still run, by CPython's own rule, when the
  long-lived objects grow by a quarter: cycles among closed streams are still collected).
  A young collection walks only the young objects still alive, so it costs about what it did;
  what changes is that far fewer objects reach the generations walked less often but in full.
  Memory held by young cyclic garbage between collections is bounded by the threshold
  (50,000 objects, a few MiB at most).
"""

import gc

YOUNG_THRESHOLD = 50_000

_applied = False


def apply() -> None:
    """Freeze what start-up built and raise the young threshold (once per process)."""
    global _applied
    if _applied:
        return
    _applied = True
    gc.collect()  # what start-up left as garbage is not frozen with the rest
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
