"""The whole-system part of bench/run.py's report: each whole-system side's CPU per call by
component, and its ratio to each peer's one process (bench/system_side.py, bench/README.md)."""

from __future__ import annotations

import peers
from system_side import COMPONENTS, SYSTEM_SIDES

# How each peer answers a tools/call: the ratio to FastMCP is given in both of its modes.
MODES = {"fastmcp": "SSE, its default", "fastmcp-json": "JSON", "ts-sdk": "JSON"}


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def cpu_per_call(rounds) -> float:
    """A side's CPU ms per call: the median over its rounds."""
    return median([r.cpu_ms_per_call for r in rounds])


def median_cpu_round(rounds):
    """The round whose total CPU per call is the median: its parts add up to the figure shown."""
    return sorted(rounds, key=lambda r: r.cpu_ms_per_call)[len(rounds) // 2]


def print_connection(plain: list, connected: list) -> None:
    """Issue 28: the same http tool with and without a connection, round by round (the rounds of
    the two alternate, so a pair saw about the same neighbours)."""
    ours, theirs = cpu_per_call(connected), cpu_per_call(plain)
    pairs = list(zip(plain, connected, strict=True))
    each = ", ".join(f"{c.cpu_ms_per_call - p.cpu_ms_per_call:+.3f}" for p, c in pairs)
    upstream = median([r.upstream_ms_per_call for r in plain + connected])
    print(
        f"system-connection - system-http, CPU per call: {ours - theirs:+.3f} ms "
        f"({ours / theirs:.2f}x; round by round: {each}); upstream (not in the totals) "
        f"{upstream:.3f} ms/call"
    )


def print_system(rounds: dict) -> None:
    systems = [name for name in SYSTEM_SIDES if name in rounds]
    if not systems:
        return
    print(
        "\nwhole system: CPU ms per call of every process the platform needs, from wrk's start "
        "until the round's calls were stored in Postgres (median round by CPU; spread over rounds)"
    )
    header = f"{'side':<14}{'total':>8}{'spread':>14}"
    header += "".join(f"{name:>11}" for name in COMPONENTS)
    header += f"{'stored in s':>13}{'Redis cmds/call':>17}"
    print(header)
    for name in systems:
        chosen = median_cpu_round(rounds[name])
        each = sorted(r.cpu_ms_per_call for r in rounds[name])
        line = f"{name:<14}{chosen.cpu_ms_per_call:>8.3f}{f'{each[0]:.3f}-{each[-1]:.3f}':>14}"
        line += "".join(f"{chosen.cpu_parts.get(part, 0.0):>11.3f}" for part in COMPONENTS)
        print(line + f"{chosen.settle_s:>13.1f}{chosen.redis_per_call:>17.2f}")
    if "system-http" in rounds and "system-connection" in rounds:
        print_connection(rounds["system-http"], rounds["system-connection"])
    if "system" in rounds and "system-baseline" in rounds:
        pairs = zip(rounds["system"], rounds["system-baseline"], strict=True)
        each = ", ".join(
            f"{ours.cpu_ms_per_call / base.cpu_ms_per_call:.2f}" for ours, base in pairs
        )
        ratio = cpu_per_call(rounds["system"]) / cpu_per_call(rounds["system-baseline"])
        print(f"system / system-baseline, CPU per call: {ratio:.2f}x (round by round: {each})")
    present = [peer for peer in peers.PEERS if peer in rounds]
    for peer in present:
        theirs = cpu_per_call(rounds[peer])
        if not theirs:
            continue
        mode = f" ({MODES[peer]})" if peer in MODES else ""
        ratios = ", ".join(f"{name} {cpu_per_call(rounds[name]) / theirs:.2f}x" for name in systems)
        print(f"whole system / {peer}{mode} process, CPU per call ({theirs:.3f} ms): {ratios}")
