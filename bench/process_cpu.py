"""CPU time of whole process trees, from /proc: what the whole-system side adds up.

A component of the platform is a root process and everything it forked: the web server (uvicorn),
the Celery worker (its main process and its pool), beat, the supervisor (scripts/run.py), Redis,
Postgres (the postmaster, its backends and background processes). Processes come and go during a
run (a Postgres backend per new connection, a pool process replaced); a process that exits is
reaped by its parent, and the kernel adds its CPU to the parent's "children" times (cutime,
cstime). So a tree's CPU is, over its live processes, own time plus reaped children's time:
the difference of two readings is the CPU the tree spent in between, exits included.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    # utime + stime, and cutime + cstime (reaped children), in seconds.
    own: float
    reaped: float


def read_proc(pid: int, proc: Path = Path("/proc")) -> Proc | None:
    """One process's line of /proc/<pid>/stat; None when it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = text.rsplit(")", 1)[1].split()
    ppid = int(fields[1])
    own = (int(fields[11]) + int(fields[12])) / TICKS
    reaped = (int(fields[13]) + int(fields[14])) / TICKS
    return Proc(pid, ppid, own, reaped)


def table(proc: Path = Path("/proc")) -> dict[int, Proc]:
    """Every process of the machine that can be read now."""
    found = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            info = read_proc(int(entry.name), proc)
            if info is not None:
                found[info.pid] = info
    return found


def descendants(root: int, processes: Mapping[int, Proc]) -> set[int]:
    """`root` and every live process below it."""
    children: dict[int, list[int]] = {}
    for info in processes.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in found or pid not in processes:
            continue
        found.add(pid)
        todo.extend(children.get(pid, ()))
    return found if root in processes else set()


def tree_seconds(root: int, processes: Mapping[int, Proc], *, without: Iterable[int] = ()) -> float:
    """CPU seconds of `root`'s tree so far, leaving out the subtrees of `without` (components
    counted on their own, such as the supervisor's children)."""
    skipped: set[int] = set()
    for other in without:
        skipped |= descendants(other, processes)
    pids = descendants(root, processes) - skipped
    # A child counted on its own and reaped by the supervisor (restarted) moves into the
    # supervisor's reaped time; the run's log says so ("restarting the ... process").
    return sum(processes[pid].own + processes[pid].reaped for pid in pids)


def components_seconds(
    roots: Mapping[str, int], processes: Mapping[int, Proc] | None = None
) -> dict[str, float]:
    """CPU seconds so far of each named tree. A root inside another's tree (the web server
    under the supervisor) is counted as its own component, not twice."""
    processes = table() if processes is None else processes
    result = {}
    for name, root in roots.items():
        others = [pid for other, pid in roots.items() if other != name and pid != root]
        inner = [pid for pid in others if pid in descendants(root, processes)]
        result[name] = tree_seconds(root, processes, without=inner)
    return result
