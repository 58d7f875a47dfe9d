"""Finding the Monty worker subprocesses of a process (to kill one, as a crash would)."""

import os
from pathlib import Path


def monty_workers(parent_pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its closing paren.
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == parent_pid and comm == "monty":
            found.append(int(entry.name))
    return found


def busy_workers(parent_pid: int) -> list[int]:
    """Workers with a thread running right now (state R): the interpreter runs in a thread."""
    busy = []
    for pid in monty_workers(parent_pid):
        try:
            states = [
                stat[stat.rindex(")") + 2 :].split()[0]
                for stat in (task / "stat" for task in Path(f"/proc/{pid}/task").iterdir())
                for stat in [stat.read_text()]
            ]
        except OSError:
            continue
        if "R" in states:
            busy.append(pid)
    return busy


def niceness(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)
