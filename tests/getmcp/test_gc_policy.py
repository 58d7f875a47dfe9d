"""The web process's garbage-collector policy (getmcp/gc_policy.py), in a fresh interpreter:
the policy changes process-wide state, so it is applied in a child process, not in pytest's."""

import json
import os
import subprocess
import sys

from tests.celery_workers import ROOT

CHILD = """
import gc, json, weakref
import django
django.setup()
from getmcp import gc_policy

class Node:
    pass

gc_policy.apply()
gc_policy.apply()  # a second start-up hook changes nothing
frozen = gc.get_freeze_count()

# A cycle made after start-up (a closed stream's task and frame, say) is still collected.
a, b = Node(), Node()
a.other, b.other = b, a
alive = weakref.ref(a)
del a, b
gc.collect()
print(json.dumps({"threshold": gc.get_threshold(), "frozen": frozen,
                  "frozen_after": gc.get_freeze_count(), "cycle_collected": alive() is None}))
"""


def run_child() -> dict:
    env = {"DJANGO_SETTINGS_MODULE": "getmcp.settings", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=os.environ | env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_start_up_objects_are_frozen_and_young_collections_are_rarer_but_cycles_still_go():
    from getmcp import gc_policy

    found = run_child()
    assert found["threshold"][0] == gc_policy.YOUNG_THRESHOLD
    assert found["threshold"][1:] == [10, 10]
    # Django's app registry and every imported module: well over ten thousand objects.
    assert found["frozen"] > 10_000
    assert found["frozen_after"] == found["frozen"]
    assert found["cycle_collected"] is True
