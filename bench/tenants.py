"""Many tenants on one process: warm calls across 10,000 servers of 1,000 organizations next to
calls to one server, the first (cold) call of a server, and the process's memory.

    .venv/bin/python bench/tenants.py --orgs 1000 --servers-per-org 10 --duration 10

The first run creates the tenants in a fresh `getmcp_bench` database (BENCH_DATABASE names
another) through the real services, an organization with one API key and its servers, each with
the `echo` static tool, in `--creators` processes side by side (not measured), and keeps them in
a template database; later runs clone the template in seconds (`--recreate` to start over).
Then on one getmcp process (uvicorn, as in bench/run.py):

1. the cold first call of `--cold` servers never called before, one at a time (latency of each);
2. a pass over every server (so each is compiled and cached);
3. `--rounds` rounds, each a wrk run of warm stateless (2026-07-28) `tools/call` on ONE server
   (bench/many.lua), then one spread over ALL of them round robin: p50 next to the one-server
   figure, as the medians of the runs and round by round (`paired`);
4. the process's resident memory after serving every server.

The per-process caches are LRUs bounded by settings, so memory stays bounded whatever the
number of tenants; a server evicted from the cache is compiled again on its next call.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))

import getmcp_side  # noqa: E402  (bench/getmcp_side.py: the getmcp side's database and paths)
import run  # noqa: E402  (bench/run.py: database, server and wrk helpers)
from streams import rss_mib  # noqa: E402

MODERN = "2026-07-28"

# Run by `manage.py shell`, once per creator process: creates the organizations numbered
# `creator` modulo `creators` through the real services (user, personal organization, API key,
# import_definition: audit chain, signals and all), one transaction per organization, and
# prints one "path key" line per server.
CREATE = """
import json, os, sys
from django.db import transaction
from accounts.models import ApiKey, User
from servers.definition import import_definition

orgs, per_org = int(os.environ["BENCH_ORGS"]), int(os.environ["BENCH_PER_ORG"])
creator, creators = int(os.environ["BENCH_CREATOR"]), int(os.environ["BENCH_CREATORS"])
tool = {
    "name": "echo", "description": "Echo the text back.", "kind": "static",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "config": {"content": [{"type": "text", "text": "{{ text }}"}]},
}
lines = []
for o in range(creator, orgs, creators):
    with transaction.atomic():
        user = User.objects.create_user(f"tenant-{o}@bench.example", None)
        org = user.personal_organization()
        _, raw = ApiKey.issue(org, "bench key")
        for s in range(per_org):
            slug = f"t{o}-s{s}"
            definition = {
                "slug": slug, "name": slug, "version": "1.0.0", "auth": "api_key",
                "tools": [tool],
            }
            import_definition(definition, org)
            lines.append(f"{o} {s} /mcp/{slug} {raw}")
    if o % 100 == creator:
        print(f"creator {creator}: organization {o + 1} of {orgs}", file=sys.stderr, flush=True)
print("@@TARGETS@@" + json.dumps(lines))
"""


def create_tenants(env: dict, orgs: int, per_org: int, creators: int) -> list[str]:
    """`creators` processes side by side (an organization's audit chain is its own, so they
    do not wait on each other); the targets in organization order."""
    shells = [
        subprocess.Popen(
            [run.PYTHON, "manage.py", "shell", "-c", CREATE],
            cwd=run.ROOT,
            env=env
            | {
                "BENCH_ORGS": str(orgs),
                "BENCH_PER_ORG": str(per_org),
                "BENCH_CREATOR": str(creator),
                "BENCH_CREATORS": str(creators),
            },
            stdout=subprocess.PIPE,
            text=True,
        )
        for creator in range(creators)
    ]
    lines = []
    for shell in shells:
        out, _ = shell.communicate()
        if shell.returncode != 0:
            raise SystemExit("creating the tenants failed (see above)")
        lines += json.loads(out.split("@@TARGETS@@", 1)[1])
    lines.sort(key=lambda line: tuple(int(n) for n in line.split(" ", 2)[:2]))
    return [line.split(" ", 2)[2] for line in lines]


def psql(*commands: str, database_url: str = getmcp_side.ADMIN_DATABASE_URL) -> str:
    command = ["psql", "-qAt", database_url]
    for sql in commands:
        command += ["-c", sql]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def prepare_tenants(
    orgs: int, per_org: int, creators: int, recreate: bool, template: str = ""
) -> tuple[dict, list]:
    """The bench database with the tenants in it, and the targets.

    The tenants are created once and kept in a template database (`<bench database>_tenants_
    <orgs>x<per org>`, with the targets and their raw keys in results/bench/): later runs clone
    it with CREATE DATABASE ... TEMPLATE in seconds and migrate the clone. `template` names
    someone else's template to clone: it is only read, never recreated nor dropped, and its
    targets file must be copied into results/bench/ first."""
    own = f"{getmcp_side.BENCH_DATABASE}_tenants_{orgs}x{per_org}"
    template = template or own
    saved = run.ROOT / "results" / "bench" / f"{template}.json"
    exists = psql(f"SELECT 1 FROM pg_database WHERE datname = '{template}'").strip() == "1"
    base_env = os.environ | {"PYTHONPATH": str(run.ROOT)}
    if template != own and not (exists and saved.exists()):
        raise SystemExit(f"no template database {template} with results/bench/{template}.json")
    if exists and saved.exists() and (template != own or not recreate):
        psql(
            f"DROP DATABASE IF EXISTS {getmcp_side.BENCH_DATABASE} WITH (FORCE)",
            f"CREATE DATABASE {getmcp_side.BENCH_DATABASE} TEMPLATE {template}",
        )
        env = base_env | {
            "DATABASE_URL": getmcp_side.ADMIN_DATABASE_URL.rsplit("/", 1)[0]
            + "/"
            + getmcp_side.BENCH_DATABASE
        }
        env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
        getmcp_side.run([run.PYTHON, "manage.py", "migrate", "--noinput"], env)
        print(f"tenants cloned from the template database {template}", flush=True)
        return env, json.loads(saved.read_text())
    env = run.prepare_getmcp(base_env)
    started = time.monotonic()
    targets = create_tenants(env, orgs, per_org, creators)
    print(
        f"created {len(targets)} servers in {time.monotonic() - started:.0f}s "
        f"({creators} creator processes)",
        flush=True,
    )
    psql(
        f"DROP DATABASE IF EXISTS {template} WITH (FORCE)",
        f"CREATE DATABASE {template} TEMPLATE {getmcp_side.BENCH_DATABASE}",
    )
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(targets))
    return env, targets


def echo_call(target: str) -> tuple[str, dict[str, str], dict]:
    """The path, headers and JSON-RPC body of one stateless tools/call of `echo` to a target
    (a "path key" line): what many.lua sends, here and in bench/tenants_inprocess.py."""
    path, key = target.split(" ")
    params = {
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench-many", "version": "1"},
        },
    }
    headers = {
        "authorization": f"Bearer {key}",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return path, headers, body


def call(client: httpx2.Client, base: str, target: str) -> float:
    """One stateless tools/call; returns its latency in ms (raises unless it echoed)."""
    path, headers, body = echo_call(target)
    started = time.perf_counter()
    response = client.post(base + path, json=body, headers=headers)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200 or "result" not in response.json():
        raise SystemExit(f"{path}: HTTP {response.status_code} {response.text[:300]}")
    return elapsed


def wrk_many(base: str, targets: list[str], seconds: int, args, pid: int) -> run.Result:
    """wrk round robin over `targets`, with the server's CPU per call (`pid`'s user + system
    time over the run / requests): the figure to compare when the machine is not quiet."""
    listing = Path(tempfile.mkstemp(prefix="getmcp-targets-")[1])
    listing.write_text("\n".join(targets) + "\n")
    command = ["wrk", "-t", "1", "-c", str(args.connections), "-d", f"{seconds}s", "--latency"]
    command += ["--timeout", "10s", "-s", str(run.BENCH / "many.lua"), base]
    profiler = None
    if args.profile:  # py-spy samples the server through the run (it costs the server nothing)
        folded = Path(args.profile) / f"tenants-{len(targets)}.txt"  # collapsed stacks
        folded.parent.mkdir(parents=True, exist_ok=True)
        spy = shutil.which("py-spy", path=f"{Path(run.PYTHON).parent}:{os.environ['PATH']}")
        profiler = subprocess.Popen(
            [spy or "py-spy", "record", "-p", str(pid), "-d", str(seconds), "-r", "200"]
            + ["-f", "raw", "-o", str(folded)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    cpu_before = run.cpu_seconds(pid)
    out = subprocess.run(
        run.pinned(args.load_cpu, command),
        env=os.environ | {"BENCH_TARGETS": str(listing)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cpu = run.cpu_seconds(pid) - cpu_before
    if profiler is not None:
        profiler.wait()
    raw = json.loads(
        next(line for line in out.splitlines() if line.startswith("BENCH_RESULT "))[13:]
    )
    return run.Result(
        name=f"{len(targets)} server(s)",
        cpu_ms_per_call=cpu * 1000 / raw["requests"] if raw["requests"] else 0.0,
        requests=raw["requests"],
        seconds=raw["duration_us"] / 1e6,
        errors=raw["bad_responses"] + raw["socket_errors"],
        p50_ms=raw["p50_us"] / 1000,
        p95_ms=raw["p95_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        mean_ms=raw["mean_us"] / 1000,
    )


def idle_cpu(pid: int, redis_url: str, seconds: float) -> tuple[float, float]:
    """The server's and Redis's CPU (% of a core) over `seconds` with no request: after the
    spread run, the state mirror's refresher keeping every server and key fresh."""
    client = redis.Redis.from_url(redis_url)

    def redis_cpu() -> float:
        found = client.info("cpu")
        return float(found["used_cpu_user"]) + float(found["used_cpu_sys"])

    server_before, redis_before = run.cpu_seconds(pid), redis_cpu()
    time.sleep(seconds)
    server = run.cpu_seconds(pid) - server_before
    return server * 100 / seconds, (redis_cpu() - redis_before) * 100 / seconds


def median_run(results: list[run.Result]) -> run.Result:
    """The run with the median throughput (its p50 and CPU per call are that run's)."""
    return sorted(results, key=lambda result: result.rps)[len(results) // 2]


def paired(ones: list[run.Result], spreads: list[run.Result]) -> str:
    """Each round's every-server run over the one-server run just before it, p50 and CPU per
    call: the median of those ratios and their quartiles. On a shared host both runs of a round
    see about the same neighbours, so a round's ratio moves less than either run does; the
    median of the ratios is the figure least moved by the rounds the host disturbed."""

    def summary(ratios: list[float]) -> str:
        if len(ratios) < 2:
            return f"{ratios[0]:.2f}x"
        low, _, high = statistics.quantiles(ratios, n=4)
        return f"{statistics.median(ratios):.2f}x (quartiles {low:.2f}-{high:.2f})"

    p50 = [b.p50_ms / a.p50_ms for a, b in zip(ones, spreads, strict=True)]
    cpu = [b.cpu_ms_per_call / a.cpu_ms_per_call for a, b in zip(ones, spreads, strict=True)]
    return (
        f"round by round, every server / one server: p50 {summary(p50)}, "
        f"server CPU per call {summary(cpu)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orgs", type=int, default=1000)
    parser.add_argument("--servers-per-org", type=int, default=10)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--cold", type=int, default=200, help="servers whose first call is timed")
    parser.add_argument("--creators", type=int, default=4, help="processes creating tenants")
    parser.add_argument(
        "--recreate", action="store_true", help="create the tenants even if a template exists"
    )
    parser.add_argument(
        "--template",
        default="",
        help="clone this existing template database (someone else's: only read) instead of "
        "<BENCH_DATABASE>_tenants_<orgs>x<per org>",
    )
    parser.add_argument(
        "--profile", default="", help="a folder: py-spy records the server during each wrk run"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="one-server and every-server runs, alternated; the medians are compared",
    )
    parser.add_argument("--server-cpu", default="1")
    parser.add_argument("--load-cpu", default="0")
    args = parser.parse_args()
    env, targets = prepare_tenants(
        args.orgs, args.servers_per_org, args.creators, args.recreate, args.template
    )
    server = run.Server("getmcp-tenants", "", env, args.server_cpu, side="getmcp-key")
    try:
        server.wait()
        base = f"http://127.0.0.1:{server.port}"
        rss_start = rss_mib(server.process.pid)
        with httpx2.Client(timeout=30) as client:
            call(client, base, targets[-1])  # the process's own first request, not a tenant's
            idle_before = idle_cpu(server.process.pid, env["REDIS_URL"], 5)
            cold = [call(client, base, target) for target in targets[: args.cold]]
            for target in targets:  # every server compiled once
                call(client, base, target)
        rss_all = rss_mib(server.process.pid)
        # The rounds alternate the two runs on the same warm process, which holds every tenant
        # (its state mirror keeping them all fresh) in both, so that only where the calls go
        # differs, and whatever else the machine does falls on both alike.
        ones: list[run.Result] = []
        spreads: list[run.Result] = []
        for _ in range(args.rounds):
            ones.append(wrk_many(base, targets[:1], args.duration, args, server.process.pid))
            spreads.append(wrk_many(base, targets, args.duration, args, server.process.pid))
        one, spread = median_run(ones), median_run(spreads)
        rss_end = rss_mib(server.process.pid)
        server_idle, redis_idle = idle_cpu(server.process.pid, env["REDIS_URL"], 10)
    finally:
        server.stop()
    cold.sort()
    print(f"\n{len(targets)} servers in {args.orgs} organizations, one getmcp process")
    print(
        f"cold first call of {len(cold)} servers: p50 {statistics.median(cold):.1f} ms, "
        f"p95 {cold[int(len(cold) * 0.95) - 1]:.1f} ms, max {cold[-1]:.1f} ms"
    )
    for number, (a, b) in enumerate(zip(ones, spreads, strict=True), 1):
        print(
            f"round {number}: one server {a.p50_ms:.2f} ms p50, {a.cpu_ms_per_call:.3f} ms CPU; "
            f"every server {b.p50_ms:.2f} ms p50, {b.cpu_ms_per_call:.3f} ms CPU"
        )
    print(f"medians of {len(ones)} round(s):")
    for result in (one, spread):
        print(
            f"warm tools/call on {result.name:<14} {result.rps:8.0f} req/s  p50 "
            f"{result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms  errors {result.errors}  "
            f"server CPU {result.cpu_ms_per_call:.3f} ms/call"
        )
    print(
        f"every server / one server: p50 {spread.p50_ms / one.p50_ms:.2f}x, server CPU per "
        f"call {spread.cpu_ms_per_call / one.cpu_ms_per_call:.2f}x"
    )
    print(paired(ones, spreads))
    print(f"load average: {' '.join(f'{n:.2f}' for n in os.getloadavg())}")
    print(
        f"server RSS: {rss_start:.0f} MiB at start, {rss_all:.0f} MiB after a call to every "
        f"server, {rss_end:.0f} MiB after the spread run"
    )
    print(
        f"idle CPU, % of a core: server {idle_before[0]:.1f}, Redis {idle_before[1]:.1f} after "
        f"one call; server {server_idle:.1f}, Redis {redis_idle:.1f} after the spread run (the "
        f"state mirror keeping every server and key used fresh)"
    )


if __name__ == "__main__":
    main()
