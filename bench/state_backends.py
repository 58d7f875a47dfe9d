"""Throughput as web processes are added, with the platform's state on one Redis, on a Redis
Cluster or on a Sentinel-watched Redis.

    .venv/bin/python bench/state_backends.py --processes 1,2,4 --backends single,cluster,sentinel

Each backend is started by the bench, `redis-server` children on spare ports with their files in
temporary directories (removed at the end), AOF with fsync every second as docker-compose.yml:

- `single`: one Redis (`bench/private_services.py`);
- `cluster`: three masters and three replicas, `REDIS_CLUSTER=true` (tests/scale/redis_cluster.py;
  the broker and Channels layer on the single Redis, as a cluster requires them apart);
- `sentinel`: one master, one replica and three Sentinels, `REDIS_URL=sentinel://...`
  (tests/scale/redis_sentinel.py; broker and Channels layer through the same Sentinels).

For each backend, a database of the bench's own is made again (`bench/run.py`'s set-up, with
that backend's settings), then `bench/processes.py` runs 1, 2 and 4 web processes behind haproxy
with wrk. Reported per run: req/s, p50, the CPU per call of the web processes and of every Redis
process of the backend (replicas and Sentinels included), and the per-core efficiency,
req/s(N) / (req/s(1) x min(N, cores)). The load average is printed with each backend: on a
shared machine compare CPU per call first. See bench/README.md.
"""

import argparse
import os
import sys
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

import private_services  # noqa: E402  (bench/private_services.py)
import processes  # noqa: E402  (bench/processes.py)
import run  # noqa: E402  (bench/run.py)

from tests.scale.redis_cluster import RedisClusterForTests  # noqa: E402
from tests.scale.redis_sentinel import MASTER_NAME, RedisSentinelForTests  # noqa: E402

BACKENDS = ("single", "cluster", "sentinel")


def backend(name: str, stack: ExitStack, aux: private_services.BenchRedis):
    """The settings that put the state on `name`, and the pids of its Redis processes."""
    if name == "single":
        return {"REDIS_URL": aux.url(0)}, [aux.pid]
    if name == "cluster":
        cluster = RedisClusterForTests(appendfsync="everysec").start()
        stack.callback(cluster.close)
        env = {
            "REDIS_URL": cluster.url(),
            "REDIS_CLUSTER": "true",
            "CELERY_BROKER_URL": aux.url(1),
            "CHANNELS_REDIS_URL": aux.url(1),
        }
        return env, [node.process.pid for node in cluster.nodes if node.process]
    if name == "sentinel":
        watched = RedisSentinelForTests(appendfsync="everysec").start()
        stack.callback(watched.close)
        env = {"REDIS_URL": watched.url(), "REDIS_SENTINEL_MASTER": MASTER_NAME}
        pids = [p.process.pid for p in [*watched.data, *watched.sentinels] if p.process]
        return env, pids
    raise SystemExit(f"unknown backend {name!r}; choose from {', '.join(BACKENDS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2, help="the best round counts")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    args.text, args.load_cpu = "hello benchmark", ""
    counts = [int(n) for n in args.processes.split(",") if n]
    names = [n for n in args.backends.split(",") if n]
    cores = os.cpu_count() or 1
    table = []
    with ExitStack() as stack:
        aux = private_services.BenchRedis()
        stack.callback(aux.close)
        for name in names:
            with ExitStack() as own:
                settings, pids = backend(name, own, aux)
                load = os.getloadavg()[0]
                env = run.prepare_getmcp(os.environ | {"PYTHONPATH": str(ROOT)} | settings)
                for count in counts:
                    result, _ = processes.measure(count, env, args, state_pids=pids)
                    table.append((name, count, result, load, os.getloadavg()[0]))
                    print(f"{name} x{count}: {result.rps:.0f} req/s", flush=True)
    print(
        f"\ntools/call echo with an API key through haproxy (round robin, TCP), "
        f"{args.connections} connections, best of {args.rounds} rounds of {args.duration}s, "
        f"{cores} cores"
    )
    print(
        f"{'state':<10}{'procs':>6}{'req/s':>8}{'p50 ms':>8}{'web ms/call':>13}"
        f"{'redis ms/call':>15}{'per-core eff.':>15}{'load':>11}"
    )
    for name, count, result, load_before, load_after in table:
        one = next((r for n, c, r, *_ in table if n == name and c == 1), None)
        efficiency = f"{result.rps / (one.rps * min(count, cores)):.0%}" if one else "-"
        print(
            f"{name:<10}{count:>6}{result.rps:>8.0f}{result.p50_ms:>8.2f}"
            f"{result.cpu_parts['web']:>13.3f}{result.cpu_parts['redis']:>15.3f}"
            f"{efficiency:>15}{load_before:>6.1f}-{load_after:<4.1f}"
        )


if __name__ == "__main__":
    main()
