"""A plain round-robin TCP load balancer (haproxy) in front of several getmcp web processes.

No sticky sessions and no HTTP awareness: each new TCP connection goes to the next live process,
which is how a cloud TCP balancer spreads clients. getmcp keeps every piece of session state in
Redis and Postgres, so any process serves any request; the scale test, the balanced conformance
run and `bench/scale.py` put the platform behind this balancer to prove it.

    python scripts/balancer.py --port 8000 --backend 127.0.0.1:8001 --backend 127.0.0.1:8002

runs haproxy in the foreground until it is stopped. A process that dies is taken out of the
rotation by a health check within about a second; a connection that finds it dead is sent to
another process (`option redispatch`).
"""

import argparse
import os
import resource
import shutil
import tempfile
from pathlib import Path

# Streams (SSE) stay open for as long as the client keeps them: no idle cut by the balancer.
TEMPLATE = """\
global
    maxconn {maxconn}
{stats}
defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    retries 3
    option redispatch

frontend mcp
    bind {host}:{port}
    default_backend web

backend web
    balance roundrobin
{servers}
"""


def config(
    *, port: int, backends: list[str], host: str = "127.0.0.1", stats_socket: str = ""
) -> str:
    servers = "\n".join(
        f"    server web{number} {address} check inter 300ms fall 1 rise 2"
        for number, address in enumerate(backends, start=1)
    )
    stats = f"    stats socket {stats_socket} level admin\n" if stats_socket else ""
    return TEMPLATE.format(
        maxconn=max_connections(), stats=stats, host=host, port=port, servers=servers
    )


def max_connections() -> int:
    """As many connections as the process may hold: haproxy needs two descriptors for each."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    return max(256, min(100_000, (hard - 64) // 2))


def installed() -> str:
    """haproxy's path ('' when it is missing); Debian puts it in /usr/sbin."""
    if found := shutil.which("haproxy"):
        return found
    return "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else ""


def haproxy() -> str:
    found = installed()
    if not found:
        raise SystemExit("haproxy is missing: apt-get install haproxy (make test does it as root)")
    return found


def command(config_path: Path) -> list[str]:
    """haproxy in the foreground (-db) on a config file."""
    return [haproxy(), "-db", "-f", str(config_path)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--backend", action="append", required=True, help="host:port, repeated")
    parser.add_argument("--stats-socket", default="")
    args = parser.parse_args()
    text = config(
        port=args.port, backends=args.backend, host=args.host, stats_socket=args.stats_socket
    )
    path = Path(tempfile.mkdtemp(prefix="getmcp-balancer-")) / "haproxy.cfg"
    path.write_text(text)
    binary, *rest = command(path)
    os.execv(binary, [binary, *rest])


if __name__ == "__main__":
    main()
