"""What spreading calls over many servers costs the application itself: the same warm stateless
`tools/call` as bench/tenants.py, but sent to the ASGI application inside one process, with no
socket, HTTP parser or wrk beside it.

    .venv/bin/python bench/tenants_inprocess.py --orgs 1000 --servers-per-org 10

bench/tenants.py gives the figure the scale target is about (p50 under wrk). This driver
answers a narrower question: how much more CPU a call takes in getmcp's own code when it goes
to the next of 10,000 servers instead of the same one, without the kernel's network stack, the
HTTP parser and wrk sharing the caches and the cores. A change to the hot path's memory
footprint can be judged here in a minute, then confirmed with bench/tenants.py. A shared host
still moves both runs (on 2026-11-24 rounds of the same code ranged 213-293 us a call): read
the medians of several rounds, and run it more than once.

It clones the tenants of bench/tenants.py (created there once), calls every server once (each
compiled and cached), then alternates `--calls` calls to one server and `--calls` calls round
robin over all of them, `--rounds` times, in a child process pinned to `--server-cpu`, and
prints the process CPU time per call of each and their ratio (medians of the rounds).

`--steps` times each step of a call alone instead, one server against every server, after the
same pass: which of them the spread makes dearer (docs/scaling.md, "What the spread costs").
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # noqa: E402  (bench/run.py: paths and CPU pinning)
import tenants  # noqa: E402  (bench/tenants.py: the tenants' database and targets)


def request_for(target: str) -> tuple[dict, bytes]:
    """The ASGI scope and body of one stateless tools/call to a target (tenants.echo_call),
    with the extensions getmcp's HTTP protocol gives a request that arrived whole: marked as
    received, and a place for the app's disconnect callbacks (each call removes its own)."""
    from gateway.endpoint.http import BODY_RECEIVED, ON_DISCONNECT

    path, headers, body = tenants.echo_call(target)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            *((name.encode(), value.encode()) for name, value in headers.items()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "extensions": {BODY_RECEIVED: True, ON_DISCONNECT: []},
    }
    return scope, json.dumps(body).encode()


async def call(application, request: tuple[dict, bytes]) -> None:
    scope, body = request
    received = False
    statuses = []
    never = asyncio.Event()

    async def receive() -> dict:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await never.wait()  # the client stays connected until the answer is sent
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await application(dict(scope), receive, send)
    if statuses != [200]:
        raise SystemExit(f"{scope['path']}: HTTP {statuses}")


async def start(application) -> None:
    """The lifespan start-up the server would run (the GC policy, the state mirror's hub)."""
    queue: asyncio.Queue = asyncio.Queue()
    await queue.put({"type": "lifespan.startup"})
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.get_running_loop().create_task(
        application({"type": "lifespan", "asgi": {"version": "3.0"}}, queue.get, send)
    )
    while not sent:
        await asyncio.sleep(0.01)


async def served_once(targets: list[str]):
    """The started application, and each target's request after one call to every server
    (each compiled and cached, its state in the mirror)."""
    from getmcp.asgi import application

    await start(application)
    requests = [request_for(target) for target in targets]
    for request in requests:
        await call(application, request)
    return application, requests


async def measure(targets: list[str], calls: int, rounds: int) -> None:
    application, requests = await served_once(targets)
    per_call: dict[str, list[float]] = {"one": [], "every": []}
    for index in range(rounds):
        for name, used in (("one", requests[:1]), ("every", requests)):
            began = time.process_time()
            for i in range(calls):
                await call(application, used[i % len(used)])
            per_call[name].append((time.process_time() - began) / calls * 1e6)
        print(
            f"round {index + 1}: one server {per_call['one'][-1]:.1f} us CPU a call, "
            f"every server {per_call['every'][-1]:.1f} us",
            flush=True,
        )
    one, every = statistics.median(per_call["one"]), statistics.median(per_call["every"])
    print(
        f"medians of {rounds} round(s): one server {one:.1f} us, every one of {len(requests)} "
        f"servers {every:.1f} us: {every / one:.3f}x, {every - one:+.1f} us a call"
    )


async def measure_steps(targets: list[str], calls: int, rounds: int) -> None:
    """--steps: each step of a warm call timed alone, one server against every server, to show
    which of them the spread makes dearer (docs/scaling.md has a table of it)."""
    application, requests = await served_once(targets)  # Django is set up from here on
    from gateway.endpoint import auth
    from gateway.endpoint.mirror import mirror
    from gateway.endpoint.stateless_context import StatelessContext
    from servers import methods
    from servers.snapshot import get_snapshot

    await call(application, requests[0])  # its state was read before the mirror listened
    states = mirror()
    servers = []
    for target, request in zip(targets, requests, strict=True):
        path, headers, body = tenants.echo_call(target)
        slug = path.rsplit("/", 1)[1]
        digest = auth.digest(headers["authorization"].removeprefix("Bearer "))
        key_digest = auth.generation_digest(digest)
        state = states.lookup(slug, key_digest, None)
        if state is None:
            raise SystemExit(f"{slug}: not answered from the mirror after its call")
        snapshot = await get_snapshot(slug, state.server_generation)
        tool = snapshot.tools[body["params"]["name"]]
        servers.append((request, slug, digest, key_digest, state.server_generation, snapshot, tool))
    params = dict(tenants.echo_call(targets[0])[2]["params"])
    del params["_meta"]  # the envelope's part: methods.call_method takes the call's own params
    arguments = params["arguments"]

    def context() -> StatelessContext:
        return StatelessContext(
            protocol_version=tenants.MODERN, client_capabilities={}, client_info=None, credential=""
        )

    async def whole(s):
        await call(application, s[0])

    async def lookup(s):
        states.lookup(s[1], s[3], None)

    async def compiled(s):
        await get_snapshot(s[1], s[4])

    async def credential(s):
        auth.cache.get(s[2])

    async def tools_call(s):
        await methods.call_method(s[5], "tools/call", params, context())

    async def validate(s):
        s[6].input_validator.iter_errors(arguments)

    async def render(s):
        s[6].compiled.render(dict(arguments))

    steps = {
        "the whole ASGI call": (whole, calls // 4),
        "tools/call (methods.call_method)": (tools_call, calls),
        "result rendering (compiled.render)": (render, calls),
        "argument validation": (validate, calls),
        "mirror lookup (server and key)": (lookup, calls),
        "compiled snapshot (get_snapshot)": (compiled, calls),
        "credential (auth.cache.get)": (credential, calls),
    }
    took: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name, (step, count) in steps.items():
            for which, used in (("one", servers[:1]), ("every", servers)):
                began = time.process_time()
                for i in range(count):
                    await step(used[i % len(used)])
                spent = (time.process_time() - began) / count * 1e9
                took.setdefault((name, which), []).append(spent)
    print(
        f"medians of {rounds} round(s), ns of CPU a step; every = round robin over {len(servers)}"
    )
    for name in steps:
        one = statistics.median(took[(name, "one")])
        every = statistics.median(took[(name, "every")])
        print(f"{name:36} one {one:9.0f}  every {every:9.0f}  spread {every - one:+8.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orgs", type=int, default=1000)
    parser.add_argument("--servers-per-org", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20_000, help="calls per run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--creators", type=int, default=4, help="processes creating tenants")
    parser.add_argument("--server-cpu", default="1")
    parser.add_argument(
        "--steps", action="store_true", help="time each step of a call alone (measure_steps)"
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)  # the measured process
    args = parser.parse_args()
    if args.child:
        targets = json.loads(Path(args.child).read_text())
        asyncio.run((measure_steps if args.steps else measure)(targets, args.calls, args.rounds))
        os._exit(0)  # the call log's flusher and the hub are not waited for
    env, targets = tenants.prepare_tenants(
        args.orgs, args.servers_per_org, args.creators, recreate=False
    )
    listing = run.ROOT / "results" / "bench" / "tenants_inprocess_targets.json"
    listing.write_text(json.dumps(targets))
    env = env | {
        "DJANGO_SETTINGS_MODULE": "getmcp.settings",
        "SNAPSHOT_CACHE_SIZE": str(max(len(targets) + 1000, 2000)),
    }
    command = [run.PYTHON, __file__, "--child", str(listing)]
    command += ["--calls", str(args.calls), "--rounds", str(args.rounds)]
    command += ["--steps"] if args.steps else []
    subprocess.run(run.pinned(args.server_cpu, command), env=env, cwd=run.ROOT, check=True)


if __name__ == "__main__":
    main()
