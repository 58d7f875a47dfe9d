"""Idle streams on one getmcp process: memory per stream, Redis connections, and what the open
streams cost the calls the process serves at the same time.

    .venv/bin/python bench/streams.py --streams 10000 --duration 10

One getmcp web process (uvicorn, as in bench/run.py, on the `getmcp-key` server) on
`--server-cpu`; the driver, which holds the streams' client ends, runs on `--load-cpu` with wrk.
Each throughput figure is the median of `--rounds` wrk runs. The driver:

1. measures warm `tools/call` throughput with wrk on one session (no stream open): the idle figure;
2. opens `--streams` idle streams, half of them session GET streams (each of its own session,
   2025-11-25) and half 2026-07-28 `subscriptions/listen` streams, over raw sockets (a stream
   is a connection that has read its response headers and then waits);
3. reads the server's resident memory (VmRSS) and the number of Redis clients, then measures
   tools/call throughput again with every stream still open;
4. sends one tools/list_changed to the server and counts how many of the open streams got it
   within 10 seconds (every stream must).

The stream limits are raised for the run (MCP_STREAMS_PER_PROCESS and _PER_KEY) and the
keep-alive is the default 15 s. See bench/README.md.
"""

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))

import getmcp_side  # noqa: E402  (bench/getmcp_side.py: the getmcp side's database and paths)
import run  # noqa: E402  (bench/run.py: the same server set-up and wrk driver)

MODERN = "2026-07-28"
SESSION_ERA = "2025-11-25"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def http_request(method: str, path: str, port: int, headers: dict, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"content-length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode() + body


class Streams:
    """Idle streams held open over raw sockets; each remembers whether an event reached it."""

    def __init__(self, port: int, path: str, authorization: str):
        self.port = port
        self.path = path
        self.authorization = authorization
        self.connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.kinds: list[str] = []
        self.refused = 0

    def base_headers(self) -> dict:
        return {
            "authorization": self.authorization,
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }

    async def _open(self, request: bytes, kind: str) -> None:
        for _ in range(10):
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            status = head.split(b"\r\n", 1)[0]
            if b" 200 " in status:
                break
            writer.close()
            if b" 503 " not in status:
                self.refused += 1
                return
            await asyncio.sleep(1)  # the process is busy: retry, as a client does
        else:
            self.refused += 1
            return
        self.connections.append((reader, writer))
        self.kinds.append(kind)

    async def open_get_stream(self, client: httpx2.AsyncClient, url: str) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": SESSION_ERA,
                "capabilities": {},
                "clientInfo": {"name": "bench-streams", "version": "1"},
            },
        }
        for _ in range(10):
            response = await client.post(url, json=init, headers=self.base_headers())
            if response.status_code != 503:
                break
            await asyncio.sleep(1)  # "retry in a few seconds", as a client does
        sid = response.headers.get("mcp-session-id")
        if sid is None:
            raise SystemExit(f"initialize failed: HTTP {response.status_code} {response.text}")
        headers = {**self.base_headers(), "mcp-session-id": sid}
        headers["mcp-protocol-version"] = SESSION_ERA
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await client.post(url, json=note, headers=headers)
        headers["accept"] = "text/event-stream"
        await self._open(http_request("GET", self.path, self.port, headers), "GET")

    async def open_listen_stream(self) -> None:
        params = {
            "notifications": {"toolsListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench-streams", "version": "1"},
            },
        }
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params}
        ).encode()
        headers = {
            **self.base_headers(),
            "mcp-protocol-version": MODERN,
            "mcp-method": "subscriptions/listen",
        }
        await self._open(http_request("POST", self.path, self.port, headers, body), "listen")

    async def open(self, url: str, count: int, concurrency: int = 64) -> None:
        limit = asyncio.Semaphore(concurrency)
        async with httpx2.AsyncClient(timeout=60) as client:

            async def one(number: int) -> None:
                async with limit:
                    for attempt in range(3):
                        try:
                            if number % 2:
                                await self.open_listen_stream()
                            else:
                                await self.open_get_stream(client, url)
                            return
                        except (httpx2.TransportError, OSError, asyncio.IncompleteReadError):
                            # A kept-alive connection the server had just closed: try again.
                            if attempt == 2:
                                raise

            await asyncio.gather(*(one(number) for number in range(count)))

    async def count_receiving(self, marker: bytes, seconds: float) -> dict[str, int]:
        async def got(reader: asyncio.StreamReader) -> bool:
            buffer = b""
            while marker not in buffer:
                chunk = await reader.read(65536)
                if not chunk:
                    return False
                buffer += chunk
            return True

        tasks = [asyncio.ensure_future(got(reader)) for reader, _ in self.connections]
        done, pending = await asyncio.wait(tasks, timeout=seconds)
        for task in pending:
            task.cancel()
        reached = {"GET": 0, "listen": 0}
        for task, kind in zip(tasks, self.kinds, strict=True):
            if task in done and not task.exception() and task.result():
                reached[kind] += 1
        return reached

    def close(self) -> None:
        for _, writer in self.connections:
            writer.close()


def redis_clients(url: str) -> int:
    return len(redis.Redis.from_url(url).client_list())


def throughput(server, session, args) -> run.Result:
    """The median of `--rounds` wrk runs: one run of 10 s swings by a fifth on this machine."""
    results = [run.measure("getmcp-key", server, session, args) for _ in range(args.rounds)]
    return sorted(results, key=lambda result: result.rps)[len(results) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--rounds", type=int, default=3, help="wrk runs for each throughput figure (median)"
    )
    parser.add_argument("--server-cpu", default="1")
    parser.add_argument("--load-cpu", default="0")
    parser.add_argument("--notify-seconds", type=float, default=10)
    parser.add_argument(
        "--idle-seconds", type=float, default=15, help="the window idle CPU is measured over"
    )
    args = parser.parse_args()
    args.text = "hello benchmark"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.streams + 200 > hard:
        raise SystemExit(f"--streams {args.streams} needs more descriptors than the limit {hard}")
    env = os.environ | {"PYTHONPATH": str(run.ROOT)}
    env = run.prepare_getmcp(env) | {
        "MCP_STREAMS_PER_PROCESS": str(args.streams + 100),
        "MCP_STREAMS_PER_KEY": str(args.streams + 100),
    }
    server = run.Server("getmcp-key", getmcp_side.GETMCP_AUTH_PATH, env, args.server_cpu)
    try:
        server.wait()
        # The streams' client end is load, like wrk: it reads every keep-alive of the streams
        # and belongs on the load CPU. Left to the scheduler it ran on the server's core too,
        # and the server's CPU per call rose with that contention (0.20 -> 0.33 ms, against
        # 0.16 -> 0.20 ms with this process on the load CPU), not with its own work.
        if run.cpu_available(args.load_cpu):
            os.sched_setaffinity(0, {int(cpu) for cpu in args.load_cpu.split(",")})
        figures = asyncio.run(measure(server, env, args))
    finally:
        server.stop()
    report(*figures)


async def measure(server, env: dict, args) -> tuple:
    """Everything on one event loop: the streams' sockets belong to it until the end."""
    redis_url = env["REDIS_URL"]
    authorization = run.bearer_for("getmcp-key")
    session = run.open_session(server.url, args.text, authorization)
    run.wrk(server.url, session, args, 3, authorization)  # warm-up
    idle = await asyncio.to_thread(throughput, server, session, args)
    rss_before = rss_mib(server.process.pid)
    clients_before = redis_clients(redis_url)

    streams = Streams(server.port, getmcp_side.GETMCP_AUTH_PATH, authorization)
    started = time.monotonic()
    await streams.open(server.url, args.streams)
    opened_in = time.monotonic() - started
    await asyncio.sleep(2)
    rss_after = rss_mib(server.process.pid)
    # What holding the streams costs by itself: CPU over one keep-alive period, no calls.
    print(f"{len(streams.connections)} streams open; server pid {server.process.pid}", flush=True)
    print(f"load average at the time: {os.getloadavg()[0]:.1f}", flush=True)
    cpu_before = run.cpu_seconds(server.process.pid)
    await asyncio.sleep(args.idle_seconds)
    idle_cpu = (run.cpu_seconds(server.process.pid) - cpu_before) / args.idle_seconds
    clients_after = redis_clients(redis_url)
    busy = await asyncio.to_thread(throughput, server, session, args)
    await asyncio.to_thread(
        subprocess.run,
        [run.PYTHON, "manage.py", "shell", "-c", NOTIFY],
        cwd=run.ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    reached = await streams.count_receiving(b"list_changed", args.notify_seconds)
    streams.close()
    return (
        streams, opened_in, rss_before, rss_after, clients_before, clients_after, idle, busy,
        reached, idle_cpu,
    )  # fmt: skip


def report(
    streams,
    opened_in,
    rss_before,
    rss_after,
    clients_before,
    clients_after,
    idle,
    busy,
    reached,
    idle_cpu,
) -> None:
    opened = len(streams.connections)
    per_stream_kib = (rss_after - rss_before) * 1024 / opened if opened else 0.0
    print(
        f"\n{opened} idle streams open on one process ({streams.refused} refused), "
        f"opened in {opened_in:.1f}s"
    )
    print(f"server RSS: {rss_before:.0f} MiB before, {rss_after:.0f} MiB with the streams open")
    print(f"memory per stream: {per_stream_kib:.1f} KiB")
    print(f"server CPU with the streams open and no calls: {idle_cpu:.1%} of a core")
    print(f"Redis clients: {clients_before} before, {clients_after} with the streams open")
    print(
        f"tools/call: {idle.rps:.0f} req/s with no stream open, {busy.rps:.0f} req/s with "
        f"{opened} open ({busy.rps / idle.rps:.0%}); p50 {idle.p50_ms:.2f} -> {busy.p50_ms:.2f} ms; "
        f"errors {idle.errors} and {busy.errors}; server CPU per call {idle.cpu_ms_per_call:.2f} -> "
        f"{busy.cpu_ms_per_call:.2f} ms"
    )
    print(
        f"a tools/list_changed reached {sum(reached.values())} of {opened} streams in the window "
        f"({reached['GET']} of {streams.kinds.count('GET')} GET streams, "
        f"{reached['listen']} of {streams.kinds.count('listen')} listen streams)"
    )


# Changes the bench server's tool so every open stream of it is told (GET and listen alike).
NOTIFY = """
import time
from servers.models import Tool
tool = Tool.objects.get(server__slug="bench-echo-auth", name="echo")
tool.description = f"Echo the text back (changed at {time.time()})."
tool.save()
"""

if __name__ == "__main__":
    main()
