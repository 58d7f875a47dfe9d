"""Throughput as web processes are added behind a plain round-robin TCP balancer (haproxy).

    .venv/bin/python bench/processes.py --processes 1,2,4 --duration 10 --connections 64

For each N: N getmcp web processes (uvicorn, one worker each, not pinned) on one Postgres and
one Redis, haproxy in front (scripts/balancer.py, no sticky sessions), one MCP session opened
through the balancer, then wrk drives warm `tools/call` with an API key through the balancer
over `--connections` connections (so consecutive connections land on different processes and
every process serves the one session). Reported: req/s, p50/p99, errors, the CPU all web
processes spent per call, and the per-core efficiency: req/s(N) / (req/s(1) x min(N, cores)).
The machine's cores bound the curve: on 2 cores, 4 processes share 2 cores with wrk, Redis and
Postgres. See bench/README.md.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))

import getmcp_side  # noqa: E402  (bench/getmcp_side.py: the getmcp side's database and paths)
import run  # noqa: E402  (bench/run.py: the server set-up, session and wrk driver)

sys.path.insert(0, str(run.ROOT / "scripts"))

import balancer  # noqa: E402  (scripts/balancer.py)


def open_through(url: str, text: str, authorization: str, seconds: float = 20) -> str:
    """A session opened through the balancer. haproxy marks a backend down when its first health
    check ran before the process listened, and up again after a few good checks: retry."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return run.open_session(url, text, authorization)
        except (httpx2.HTTPError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def measure(count: int, env: dict, args, state_pids=()) -> tuple[run.Result, float]:
    """The best of `args.rounds` rounds with `count` processes; `state_pids` are the Redis
    processes holding the platform's state, whose CPU per call goes in `cpu_parts["redis"]`
    (bench/state_backends.py)."""
    servers = [
        run.Server(f"getmcp-key-{n}", getmcp_side.GETMCP_AUTH_PATH, env, "", side="getmcp-key")
        for n in range(count)
    ]
    front_port = run.free_port()
    config = Path(tempfile.mkdtemp(prefix="getmcp-bench-")) / "haproxy.cfg"
    config.write_text(
        balancer.config(port=front_port, backends=[f"127.0.0.1:{s.port}" for s in servers])
    )
    front = subprocess.Popen(balancer.command(config), stdout=subprocess.DEVNULL)
    try:
        for server in servers:
            server.wait()
        url = f"http://127.0.0.1:{front_port}{getmcp_side.GETMCP_AUTH_PATH}"
        authorization = run.bearer_for("getmcp-key")
        session = open_through(url, args.text, authorization)
        run.wrk(url, session, args, args.warmup, authorization)
        best = None
        for _ in range(args.rounds):
            before = sum(run.cpu_seconds(s.process.pid) for s in servers)
            state_before = sum(run.cpu_seconds(pid) for pid in state_pids)
            raw = run.wrk(url, session, args, args.duration, authorization)
            cpu = sum(run.cpu_seconds(s.process.pid) for s in servers) - before
            state_cpu = sum(run.cpu_seconds(pid) for pid in state_pids) - state_before
            calls = raw["requests"] or 1
            result = run.Result(
                name=f"{count} process(es)",
                cpu_ms_per_call=cpu * 1000 / raw["requests"] if raw["requests"] else 0.0,
                requests=raw["requests"],
                seconds=raw["duration_us"] / 1e6,
                errors=raw["bad_responses"] + raw["socket_errors"],
                p50_ms=raw["p50_us"] / 1000,
                p95_ms=raw["p95_us"] / 1000,
                p99_ms=raw["p99_us"] / 1000,
                mean_ms=raw["mean_us"] / 1000,
                cpu_parts={"web": cpu * 1000 / calls, "redis": state_cpu * 1000 / calls},
            )
            if best is None or result.rps > best.rps:
                best = result
        return best, cpu
    finally:
        front.terminate()
        front.wait(10)
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="the best round counts")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    args.text, args.load_cpu = "hello benchmark", ""
    counts = [int(n) for n in args.processes.split(",") if n]
    env = run.prepare_getmcp(os.environ | {"PYTHONPATH": str(run.ROOT)})
    results = [measure(count, env, args)[0] for count in counts]
    cores = os.cpu_count() or 1
    base = results[0].rps / counts[0] if counts[0] == 1 else None
    print(
        f"\ntools/call echo with an API key through haproxy (round robin, TCP), "
        f"{args.connections} connections, best of {args.rounds} rounds of {args.duration}s, "
        f"{cores} cores"
    )
    print(
        f"{'processes':<11}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}"
        f"{'CPU ms/call':>13}{'per-core eff.':>15}"
    )
    for count, result in zip(counts, results, strict=True):
        efficiency = f"{result.rps / (base * min(count, cores)):.0%}" if base else "-"
        print(
            f"{count:<11}{result.rps:>8.0f}{result.p50_ms:>9.2f}{result.p99_ms:>9.2f}"
            f"{result.errors:>8}{result.cpu_ms_per_call:>13.2f}{efficiency:>15}"
        )


if __name__ == "__main__":
    main()
