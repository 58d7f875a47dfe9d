"""tools/call throughput and latency: getmcp next to the reference MCP servers offering the same tool.

Each server runs in one process (bench/peers.py says how each peer is served); getmcp under
uvicorn on Postgres + Redis, as deployed.
For each: open an MCP session (initialize + notifications/initialized), check one call echoes,
warm up, then drive tools/call with wrk (bench/call.lua) for a fixed duration and concurrency.
See bench/README.md.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx2
import peers
import system_report
import system_side
from getmcp_side import (
    BENCH,
    GETMCP_SIDES,
    GETMCP_WATCHED_PATH,
    PYTHON,
    ROOT,
    bearer_for,
    path_of,
    prepare_getmcp,
    side_env,
)

PROTOCOL_VERSION = "2025-11-25"
SIDES = (*GETMCP_SIDES, *system_side.SYSTEM_SIDES, *peers.PEERS)
DEFAULT_SIDES = "getmcp-key,ts-sdk,fastmcp,python-sdk"


@dataclass
class Result:
    name: str
    # CPU time of the server process per call: unlike req/s, barely moved by other load.
    cpu_ms_per_call: float
    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    # CPU ms per call of each process counted: "server" for one process; web, worker, beat,
    # supervisor, redis and postgres on a whole-system side (bench/system_side.py).
    cpu_parts: dict[str, float] = field(default_factory=dict)
    # Whole-system sides: seconds after wrk stopped until the round's calls were in Postgres,
    # and the commands Redis ran per call in that window (INFO commandstats).
    settle_s: float = 0.0
    redis_per_call: float = 0.0
    # system-http and system-connection: bench/upstream.py's CPU ms per call (not in the total).
    upstream_ms_per_call: float = 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", 10)))
    parser.add_argument("--warmup", type=int, default=3, help="seconds of load before measuring")
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", 3)))
    parser.add_argument(
        "--connections", type=int, default=int(os.environ.get("BENCH_CONNECTIONS", 32))
    )
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--text", default="hello benchmark", help="what echo is given")
    parser.add_argument("--only", choices=SIDES, help="run one side only")
    parser.add_argument(
        "--sides", default=DEFAULT_SIDES, help=f"comma-separated, of {', '.join(SIDES)}"
    )
    parser.add_argument(
        "--server-cpu", default="1", help="CPU the server is pinned to ('' to not pin)"
    )
    parser.add_argument("--load-cpu", default="0", help="CPU wrk is pinned to ('' to not pin)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--baseline", type=Path, help="source tree the getmcp-baseline side is served from"
    )
    parser.add_argument(
        "--watcher-on",
        choices=("same", "other"),
        default="same",
        help="getmcp-watched: the inspector socket on the measured process, or on another one",
    )
    args = parser.parse_args()
    args.sides = [side for side in args.sides.split(",") if side]
    if not set(args.sides) <= set(SIDES):
        parser.error(f"--sides: choose among {', '.join(SIDES)}")
    baselines = {"getmcp-baseline", "system-baseline"} & {*args.sides, args.only}
    if baselines and not args.baseline:
        parser.error(
            f"{min(baselines)} needs --baseline DIR (e.g. git archive main | tar -x -C DIR)"
        )
    if not re.fullmatch(r"[A-Za-z0-9 .,_-]{1,200}", args.text):
        parser.error("--text: use up to 200 letters, digits, spaces and .,_- (it is put in JSON)")
    return args


def pinned(cpu: str, command: list[str]) -> list[str]:
    if cpu and shutil.which("taskset") and cpu_available(cpu):
        return ["taskset", "-c", cpu, *command]
    return command


def cpu_available(cpu: str) -> bool:
    return all(int(c) in os.sched_getaffinity(0) for c in cpu.split(",") if c.isdigit())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(
        self, name: str, path: str, env: dict, cpu: str, side: str = "", tree: Path = ROOT
    ):
        self.name = name
        side = side or name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.env = env
        self.log = ROOT / "results" / "bench" / f"{name}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        if side in GETMCP_SIDES:
            # As deployed (scripts/run.py, the gunicorn worker): getmcp's HTTP protocol.
            command = peers.uvicorn(PYTHON, "getmcp.asgi:application", self.port)
            command += ["--http", "getmcp.http_protocol:HttpProtocol"]
        else:
            command, extra = peers.command(side, PYTHON, self.port)
            env = env | extra
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                pinned(cpu, command), cwd=tree, env=env, stdout=log, stderr=log
            )

    def wait(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited while starting; see {self.log}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise SystemExit(f"{self.name} did not start within {seconds}s; see {self.log}")

    def cpu(self) -> dict[str, float]:
        return {"server": cpu_seconds(self.process.pid)}

    def before_round(self) -> None:
        """Nothing: a one-process side has no work left over from earlier calls."""

    def after_round(self, requests: int) -> dict[str, float]:
        return {}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def rpc_result(response: httpx2.Response) -> dict:
    """The JSON-RPC message of a response sent as JSON or as SSE events."""
    if response.is_error:
        raise SystemExit(f"{response.request.url}: {response.status_code} {response.text[:500]}")
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    return message
        raise ValueError("no JSON-RPC response in the event stream")
    return response.json()


def open_session(url: str, text: str, authorization: str = "") -> str:
    """initialize + notifications/initialized, then one checked call; returns the session id."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    with httpx2.Client(timeout=10, headers=headers) as client:
        init = client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "getmcp-bench", "version": "1.0"},
                },
            },
        )
        message = rpc_result(init)
        if "result" not in message:
            raise SystemExit(f"initialize failed at {url}: {message}")
        session = init.headers.get("mcp-session-id", "")
        headers = {"Mcp-Protocol-Version": PROTOCOL_VERSION}
        if session:
            headers["Mcp-Session-Id"] = session
        client.headers.update(headers)
        sent = client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        if sent.status_code != 202:
            raise SystemExit(f"notifications/initialized got HTTP {sent.status_code} at {url}")
        call = client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": text}},
            },
        )
        content = rpc_result(call).get("result", {}).get("content", [])
        if content != [{"type": "text", "text": text}]:
            raise SystemExit(f"echo did not echo at {url}: {call.text[:300]}")
        return session


def wrk(
    url: str, session: str, args: argparse.Namespace, seconds: int, authorization: str = ""
) -> dict:
    command = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{seconds}s"]
    command += ["--latency", "--timeout", "10s", "-s", str(BENCH / "call.lua"), url]
    env = os.environ | {
        "BENCH_SESSION_ID": session,
        "BENCH_PROTOCOL_VERSION": PROTOCOL_VERSION,
        "BENCH_TEXT": args.text,
        "BENCH_AUTHORIZATION": authorization,
    }
    out = subprocess.run(
        pinned(args.load_cpu, command), env=env, capture_output=True, text=True, check=True
    ).stdout
    for line in out.splitlines():
        if line.startswith("BENCH_RESULT "):
            return json.loads(line.removeprefix("BENCH_RESULT "))
    raise SystemExit(f"wrk printed no result:\n{out}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(name: str, server, session: str, args: argparse.Namespace) -> Result:
    """One round on a side: a Server, or a whole-system side (system_side.PlatformSide), whose
    CPU window stays open until the round's calls are stored."""
    server.before_round()
    before = server.cpu()
    raw = wrk(server.url, session, args, args.duration, bearer_for(name))
    extra = server.after_round(raw["requests"])
    after = server.cpu()
    calls = raw["requests"]
    parts = {k: (after[k] - before[k]) * 1000 / calls if calls else 0.0 for k in after}
    return Result(
        name=name,
        cpu_ms_per_call=sum(parts.values()),
        cpu_parts=parts,
        **extra,
        requests=raw["requests"],
        seconds=raw["duration_us"] / 1e6,
        errors=raw["bad_responses"] + raw["socket_errors"],
        p50_ms=raw["p50_us"] / 1000,
        p95_ms=raw["p95_us"] / 1000,
        p99_ms=raw["p99_us"] / 1000,
        mean_ms=raw["mean_us"] / 1000,
    )


def median_round(rounds: list[Result]) -> Result:
    return sorted(rounds, key=lambda r: r.rps)[len(rounds) // 2]


def print_table(
    results: list[Result], rounds: dict[str, list[Result]], args: argparse.Namespace
) -> None:
    if "getmcp-watched" in rounds:
        print(f"\ninspector socket on the {args.watcher_on} process as getmcp-watched")
    print(
        f"\ntools/call echo, median of {args.rounds} rounds of {args.duration}s, "
        f"{args.connections} connections, "
        f"wrk {args.threads} thread(s), one process each"
        + (
            f", server on CPU {args.server_cpu}, wrk on CPU {args.load_cpu}"
            if args.server_cpu
            else ""
        )
    )
    print(
        f"{'server':<14}{'req/s':>8}{'rounds req/s':>16}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
        f"{'errors':>8}{'CPU ms/call':>13}"
    )
    for r in results:
        each = sorted(found.rps for found in rounds[r.name])
        spread = f"{each[0]:.0f}-{each[-1]:.0f}"
        errors = sum(found.errors for found in rounds[r.name])
        cpu = sorted(found.cpu_ms_per_call for found in rounds[r.name])[len(each) // 2]
        print(
            f"{r.name:<14}{r.rps:>8.0f}{spread:>16}{r.p50_ms:>9.2f}{r.p95_ms:>9.2f}"
            f"{r.p99_ms:>9.2f}{errors:>8}{cpu:>13.2f}"
        )
    by_name = {r.name: r for r in results}
    oauth, key = by_name.get("getmcp-oauth"), by_name.get("getmcp-key")
    if oauth and key and key.rps and key.p50_ms and key.cpu_ms_per_call:
        print(
            f"OAuth token / API key: throughput {oauth.rps / key.rps:.3f}x, "
            f"p50 latency {oauth.p50_ms / key.p50_ms:.3f}x, "
            f"CPU per call {oauth.cpu_ms_per_call / key.cpu_ms_per_call:.3f}x"
        )
    ours = by_name.get("getmcp")
    watched = by_name.get("getmcp-watched")
    if ours and watched and ours.rps and ours.p50_ms:
        # CPU per call as in the table: the median over the rounds.
        cpu = {
            name: sorted(r.cpu_ms_per_call for r in rounds[name])[len(rounds[name]) // 2]
            for name in ("getmcp", "getmcp-watched")
        }
        print(
            f"inspector open / nobody watching: throughput {watched.rps / ours.rps:.3f}x, "
            f"p50 latency {watched.p50_ms / ours.p50_ms:.3f}x, "
            f"CPU per call {cpu['getmcp-watched'] / cpu['getmcp']:.3f}x (median of rounds)"
        )
    system_report.print_system(rounds)
    ours = by_name.get("getmcp-key") or by_name.get("getmcp")
    for other in peers.PEERS:
        theirs = by_name.get(other)
        if ours and theirs and theirs.rps and theirs.p50_ms and theirs.p99_ms:
            print(
                f"{ours.name} / {other}: throughput {ours.rps / theirs.rps:.2f}x, "
                f"p50 latency {ours.p50_ms / theirs.p50_ms:.2f}x, "
                f"p99 latency {ours.p99_ms / theirs.p99_ms:.2f}x, "
                f"CPU per call {ours.cpu_ms_per_call / theirs.cpu_ms_per_call:.2f}x"
            )


def start_servers(env: dict, args: argparse.Namespace, servers: dict) -> None:
    """Starts the sides into `servers` (filled as they start: a failure stops those started)."""
    getmcp_env = None
    for name in SIDES:
        if (args.only and args.only != name) or (not args.only and name not in args.sides):
            continue
        if name in system_side.SYSTEM_SIDES:
            # One platform for the sides of this tree, another for system-baseline's tree.
            kind = "system-baseline" if name == "system-baseline" else "system"
            if kind not in PLATFORM:
                tree = args.baseline if kind == "system-baseline" else ROOT
                print(f"{kind}: starting Redis, Postgres and {tree}/scripts/run.py", flush=True)
                wanted = set(args.sides) | {args.only}
                upstream_cpu = (
                    args.load_cpu
                    if kind == "system" and wanted & set(system_side.CONNECTION_SIDES)
                    else None
                )
                PLATFORM[kind] = system_side.Platform(
                    env, args.server_cpu, tree, kind, upstream_cpu=upstream_cpu
                )
            servers[name] = system_side.PlatformSide(name, PLATFORM[kind])
            continue
        if name in GETMCP_SIDES:
            if getmcp_env is None:
                print("getmcp: preparing its database and the bench servers", flush=True)
                getmcp_env = prepare_getmcp(env)
            path = path_of(name)
            server_env, tree = side_env(name, getmcp_env, args)
        else:
            path, server_env, tree = "/mcp", env, ROOT
        servers[name] = Server(name, path, server_env, args.server_cpu, tree=tree)


# The whole-system sides' platforms (bench/system_side.py), stopped after every side.
PLATFORM: dict[str, system_side.Platform] = {}


def start_watcher(server: Server) -> subprocess.Popen:
    """bench/watcher.py: the inspector's WebSocket open on the server's own process."""
    origin = f"http://127.0.0.1:{server.port}"
    ws_url = f"ws://127.0.0.1:{server.port}/ws/inspector/{GETMCP_WATCHED_PATH.rsplit('/', 1)[1]}/"
    watcher = subprocess.Popen(
        [PYTHON, str(BENCH / "watcher.py"), ws_url, origin],
        cwd=ROOT,
        env=server.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    if watcher.stdout.readline().strip() != "watching":
        raise SystemExit("the inspector watcher did not connect")
    return watcher


def main() -> None:
    args = parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is missing: apt-get install wrk (make bench does it when root)")
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    watcher = socket_host = None
    servers: dict = {}
    try:
        start_servers(env, args, servers)
        sessions = {}
        for name, server in servers.items():
            server.wait()
            if name == "getmcp-watched":
                host = server
                if args.watcher_on == "other":
                    # The socket lands on another web process, as with several workers.
                    host = socket_host = Server(
                        "inspector-socket", "getmcp.asgi:application", "/", server.env, ""
                    )
                    host.wait()
                watcher = start_watcher(host)
            sessions[name] = open_session(server.url, args.text, bearer_for(name))
            if args.warmup:
                wrk(server.url, sessions[name], args, args.warmup, bearer_for(name))
        # Rounds alternate between the servers so a burst of other work on the machine is shared.
        rounds: dict[str, list[Result]] = {name: [] for name in servers}
        for number in range(1, args.rounds + 1):
            for name, server in servers.items():
                print(f"round {number}/{args.rounds}: {name}", flush=True)
                rounds[name].append(measure(name, server, sessions[name], args))
    finally:
        if watcher is not None:
            watcher.send_signal(signal.SIGTERM)
            print("watcher received:", watcher.communicate(timeout=10)[0].strip().splitlines()[-1])
        for server in [*servers.values(), *([socket_host] if socket_host else [])]:
            server.stop()
        while PLATFORM:
            PLATFORM.popitem()[1].stop()
    results = [median_round(found) for found in rounds.values()]
    print_table(results, rounds, args)
    if args.json:
        report = {
            name: [asdict(r) | {"rps": r.rps} for r in found] for name, found in rounds.items()
        }
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
