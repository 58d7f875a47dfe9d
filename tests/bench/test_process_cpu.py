"""bench/process_cpu.py: the CPU of a process tree, as the whole-system bench side adds it up."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import process_cpu  # noqa: E402  (bench/ is scripts, not a package)
from process_cpu import Proc  # noqa: E402

# A parent that forks a child burning BURN seconds of CPU (its own CPU clock, not the wall's),
# reaps it, says so and waits to be killed: the child's CPU now lives in the parent's cutime.
BURN = 0.3
PARENT = f"""
import subprocess, sys
child = [sys.executable, "-c", "import time\\nwhile time.process_time() < {BURN}: pass"]
subprocess.run(child, check=True)
print("reaped", flush=True)
sys.stdin.read()
"""


def test_a_tree_counts_the_cpu_of_a_child_that_exited_and_nothing_outside_it():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    bystander = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout.readline().strip() == "reaped"
        assert bystander.stdout.readline().strip() == "reaped"
        processes = process_cpu.table()
        assert process_cpu.descendants(parent.pid, processes) == {parent.pid}
        counted = process_cpu.tree_seconds(parent.pid, processes)
        # The child's BURN seconds (to a clock tick) and the parent's own start-up, but not the
        # bystander's burn as well.
        assert BURN - 0.02 <= counted < 2 * BURN - 0.02
        assert processes[parent.pid].reaped >= BURN - 0.02
    finally:
        for process in (parent, bystander):
            process.kill()
            process.wait()
            process.stdin.close()
            process.stdout.close()


def test_a_tree_holds_its_live_descendants_and_not_a_subtree_counted_on_its_own():
    processes = {
        1: Proc(1, 0, own=1.0, reaped=0.5),  # a supervisor
        2: Proc(2, 1, own=2.0, reaped=0.0),  # its child, a component of its own
        3: Proc(3, 2, own=4.0, reaped=0.25),  # that child's child
        4: Proc(4, 1, own=8.0, reaped=0.0),  # another child, not named
        5: Proc(5, 0, own=16.0, reaped=0.0),  # unrelated
    }
    assert process_cpu.descendants(1, processes) == {1, 2, 3, 4}
    assert process_cpu.descendants(42, processes) == set()
    assert process_cpu.tree_seconds(1, processes) == 15.75
    assert process_cpu.tree_seconds(1, processes, without=[2]) == 9.5
    assert process_cpu.components_seconds({"top": 1, "inner": 2}, processes) == {
        "top": 9.5,
        "inner": 6.25,
    }
