"""The getmcp sides of the benchmark: its database and bench servers, each side's credentials,
path and environment (metrics in shared files, OTLP tracing into a sink of this process, a
baseline source tree). bench/run.py drives them next to the peers (bench/peers.py)."""

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PYTHON = sys.executable
ADMIN_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres"
# Another name (BENCH_DATABASE) lets several people bench on one Postgres at once.
BENCH_DATABASE = os.environ.get("BENCH_DATABASE", "getmcp_bench")
OWNER = "bench@example.com"
GETMCP_PATH = "/mcp/bench-echo"
GETMCP_AUTH_PATH = "/mcp/bench-echo-auth"
GETMCP_WATCHED_PATH = "/mcp/bench-echo-watched"
# getmcp: a server with `auth: none`; getmcp-key and getmcp-oauth: the same tool on a server
# taking both, with an API key and with an OAuth access token. getmcp-watched: the echo server
# with its live inspector open on the same process (bench/watcher.py), next to getmcp unwatched.
# getmcp-baseline: the same as getmcp, served from another source tree (--baseline DIR, e.g. an
# export of main) to compare a change side by side; getmcp-multiproc: with PROMETHEUS_MULTIPROC_DIR
# (metrics in shared files, as under several workers); getmcp-traced: with OpenTelemetry
# exporting spans to an OTLP sink in this process, at the default sampling; getmcp-traced-all: every
# call traced (docs/observability.md). The peers (official SDKs, FastMCP): bench/peers.py.
GETMCP_SIDES = (
    "getmcp",
    "getmcp-key",
    "getmcp-oauth",
    "getmcp-baseline",
    "getmcp-multiproc",
    "getmcp-traced",
    "getmcp-traced-all",
    "getmcp-watched",
)
CREDENTIALS: dict[str, str] = {}


def path_of(name: str) -> str:
    """The /mcp/<slug> path a getmcp side is called on."""
    if name in ("getmcp-key", "getmcp-oauth"):
        return GETMCP_AUTH_PATH
    return GETMCP_WATCHED_PATH if name == "getmcp-watched" else GETMCP_PATH


def run(command: list[str], env: dict) -> None:
    subprocess.run(
        command, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )


def prepare_getmcp(env: dict, database_url: str = "") -> dict:
    """A database of its own for the benchmark server, recreated each run (`database_url`: an
    empty database made by the caller, such as the whole-system side's own Postgres)."""
    env = dict(env)
    given = database_url or os.environ.get("BENCH_DATABASE_URL")
    if given:
        env["DATABASE_URL"] = given
    else:
        subprocess.run(
            [
                "psql",
                "-q",
                ADMIN_DATABASE_URL,
                "-c",
                f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)",
            ]
            + ["-c", f"CREATE DATABASE {BENCH_DATABASE}"],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        env["DATABASE_URL"] = ADMIN_DATABASE_URL.rsplit("/", 1)[0] + "/" + BENCH_DATABASE
    env.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    manage = [PYTHON, "manage.py"]
    run([*manage, "migrate", "--noinput"], env)
    # On a database given by BENCH_DATABASE_URL the owner may exist already: that is fine.
    subprocess.run(
        [*manage, "createuser", OWNER],
        env=env | {"GETMCP_PASSWORD": secrets.token_urlsafe(24)},
        cwd=ROOT,
        check="BENCH_DATABASE_URL" not in os.environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL if "BENCH_DATABASE_URL" in os.environ else None,
    )
    definition = str(BENCH / "getmcp_server.yaml")
    run([*manage, "server", "import", definition, "--owner", OWNER, "--replace"], env)
    for name in ("getmcp_auth_server.yaml", "getmcp_watched_server.yaml"):
        definition = str(BENCH / name)
        run([*manage, "server", "import", definition, "--owner", OWNER, "--replace"], env)
    minted = subprocess.run(
        [PYTHON, str(BENCH / "credentials.py")],
        env=env
        | {"DJANGO_SETTINGS_MODULE": "getmcp.settings", "OAUTH_ACCESS_TOKEN_SECONDS": "86400"},
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    CREDENTIALS.update(json.loads(minted.strip().splitlines()[-1]))
    return env


def bearer_for(name: str) -> str:
    """The Authorization header value of a side ('' for the sides without credentials)."""
    if name in ("getmcp-key", "system-key"):
        return f"Bearer {CREDENTIALS['key']}"
    if name == "getmcp-oauth":
        return f"Bearer {CREDENTIALS['token']}"
    if name in ("system-http", "system-connection"):  # a person's key (bench/connection_seed.py)
        return f"Bearer {CREDENTIALS['person_key']}"
    return ""


class OtlpSink:
    """Accepts OTLP/HTTP exports and drops them: the traced side pays for building, encoding
    and sending its spans, not for a collector."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("content-length", 0)))
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


def side_env(name: str, env: dict, args: argparse.Namespace) -> tuple[dict, Path]:
    """The environment and source tree of a getmcp side."""
    if name == "getmcp-baseline":
        return env | {"PYTHONPATH": str(args.baseline)}, args.baseline
    if name == "getmcp-multiproc":
        directory = tempfile.mkdtemp(prefix="getmcp-bench-metrics-")
        return env | {"PROMETHEUS_MULTIPROC_DIR": directory}, ROOT
    if name == "getmcp-traced":  # the default sampling: 10% of calls without a traceparent
        return env | {"OTEL_EXPORTER_OTLP_ENDPOINT": OtlpSink().url}, ROOT
    if name == "getmcp-traced-all":  # every call recorded and exported
        sampled = {"OTEL_TRACES_SAMPLER": "parentbased_always_on"}
        return env | {"OTEL_EXPORTER_OTLP_ENDPOINT": OtlpSink().url, **sampled}, ROOT
    return env, ROOT
