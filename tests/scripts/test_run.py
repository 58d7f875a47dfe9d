"""scripts/run.py, what `make run` serves with: uvicorn alone in embedded mode; with REDIS_URL the
web server, a real Celery worker and beat, started and stopped together, and one that exits
restarted while the others keep running."""

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from django.conf import settings

from getmcp import heartbeat
from infra.redis import sync_client
from tests.celery_workers import database_url_for_workers, wait_until
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run.py"


def load_script():
    spec = importlib.util.spec_from_file_location("getmcp_run_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def descendants(pid: int) -> set[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_embedded_mode_refuses_more_than_one_web_process():
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--workers", "2"], env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "WORKERS>1 needs REDIS_URL" in result.stderr


def test_embedded_mode_is_the_web_server_alone_and_workers_n_makes_n_web_processes(monkeypatch):
    run = load_script()
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert list(run.commands("127.0.0.1", 8000, 1, Path("s"))) == ["web"]
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    processes = run.commands("0.0.0.0", 9000, 3, Path("s"))
    assert list(processes) == ["web", "worker", "beat"]
    assert processes["web"][-6:] == ["--host", "0.0.0.0", "--port", "9000", "--workers", "3"]
    assert processes["beat"][-1] == "--schedule=s"


def test_printed_urls_name_a_host_that_answers():
    run = load_script()
    assert run.url_host("127.0.0.1") == "127.0.0.1"
    assert run.url_host("mcp.example.com") == "mcp.example.com"
    assert run.url_host("0.0.0.0") not in ("0.0.0.0", "")


class Running:
    """scripts/run.py with this test run's Redis and database, on a free port."""

    def __init__(self, tmp_path: Path, *args: str, port: int | None = None):
        self.port = port or free_port()
        env = {**os.environ, "DATABASE_URL": database_url_for_workers()}
        env["REDIS_URL"] = settings.REDIS_URL
        env.pop("TEST_DB_NAME", None)
        self.log = tmp_path / "run.log"
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, str(SCRIPT), "--port", str(self.port), *args],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stop() kills its group, not this test run's
            )

    def answers(self) -> bool:
        try:
            return httpx2.get(f"http://127.0.0.1:{self.port}/login/", timeout=2).status_code == 200
        except httpx2.HTTPError:
            return False

    def wait_all_up(self):
        wait_until(self.answers, timeout=60, what=f"the web server\n{self.log.read_text()}")
        wait_until(
            lambda: heartbeat.status() == {"worker": True, "beat": True, "restarting": {}},
            timeout=60,
            what=f"the worker and beat heartbeats\n{self.log.read_text()}",
        )
        return descendants(self.process.pid)

    def stop(self):
        """Whatever a test left running: run.py is asked to stop everything, and what is still
        there after that (its children, found before they could be orphaned) is killed."""
        left = descendants(self.process.pid)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def quiet_heartbeats():
    sync_client().delete(heartbeat.WORKERS_KEY, heartbeat.BEAT_KEY)
    yield
    from getmcp.celery import app

    app.control.purge()  # what beat sent must not reach a later test's worker


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_with_redis_web_worker_and_beat_start_together_and_one_signal_stops_them_all(
    live_database, tmp_path, quiet_heartbeats, signum
):
    running = Running(tmp_path)
    try:
        children = running.wait_all_up()
        assert len(children) >= 3
        running.process.send_signal(signum)
        assert running.process.wait(60) == 0
        wait_until(lambda: not any(alive(pid) for pid in children), timeout=10, what="children")
        assert not running.answers()
        assert heartbeat.status()["worker"] is False  # the worker took its heartbeat back
        assert "stopping web, worker, beat" in running.log.read_text()
    finally:
        running.stop()


def test_restarts_back_off_from_one_second_to_at_most_thirty():
    run = load_script()
    assert [run.backoff(exits) for exits in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def leader_of(children: set[int], marker: bytes, also: bytes = b"") -> int:
    """The process of `children` whose command line holds `marker` (and `also`) and that leads
    its own group: what scripts/run.py started, not one of its pool processes. 0 if none."""
    for pid in children:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if marker in cmdline and also in cmdline and os.getpgid(pid) == pid:
                return pid
        except (OSError, ProcessLookupError):
            continue
    return 0


class Poller(threading.Thread):
    """Asks /mcp/ every 0.1 s until stopped; counts what answered and what did not."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.url = f"http://127.0.0.1:{port}/mcp/-"
        self.answered, self.failed = 0, []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                httpx2.post(self.url, json={}, timeout=5)
                self.answered += 1
            except httpx2.HTTPError as exc:
                self.failed.append(repr(exc))
            self.done.wait(0.1)

    def stop(self):
        self.done.set()
        if self.is_alive():
            self.join(10)


WORKER = (b"celery\x00-A", b"worker")


def worker_heartbeats() -> list[tuple[bytes, float]]:
    return sync_client().zrange(heartbeat.WORKERS_KEY, 0, -1, withscores=True) or [(b"", 0.0)]


@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_is_restarted_while_the_web_server_keeps_answering(
    live_database, tmp_path, quiet_heartbeats, client, user
):
    running = Running(tmp_path)
    poller = Poller(running.port)
    try:
        children = running.wait_all_up()
        worker = leader_of(children, *WORKER)
        web = leader_of(children, b"uvicorn\x00getmcp")
        assert worker and web
        poller.start()
        os.kill(worker, signal.SIGKILL)
        worker_gone_at = time.time()

        # Meanwhile the dashboard says what is going on.
        note = wait_until(
            lambda: heartbeat.status()["restarting"].get("worker"), timeout=10, what="a note"
        )
        assert note["code"] == -signal.SIGKILL and note["exits"] == 1
        client.force_login(user)
        page = client.get("/calls/").content.decode()
        assert "The task worker stopped and is being restarted." in page

        # Back: a new worker process whose heartbeat is younger than the old one's death.
        wait_until(
            lambda: (
                leader_of(descendants(running.process.pid), *WORKER) not in (0, worker)
                and max(score for _, score in worker_heartbeats()) > worker_gone_at
            ),
            timeout=60,
            what=f"the worker to come back\n{running.log.read_text()}",
        )
        # Once it has run a while, the note is gone and so is the banner.
        wait_until(lambda: not heartbeat.status()["restarting"], timeout=30, what="the note to go")
        assert "data-background-banner" not in client.get("/calls/").content.decode()
        poller.stop()
        assert poller.failed == [] and poller.answered > 20
        assert alive(web) and running.process.poll() is None
        log = running.log.read_text()
        assert "the worker process exited (code -9); restarting it in 1 s" in log
        assert "restarting the worker process" in log

        # SIGTERM still stops everything.
        everything = descendants(running.process.pid)
        running.process.send_signal(signal.SIGTERM)
        assert running.process.wait(60) == 0
        wait_until(lambda: not any(alive(pid) for pid in everything), timeout=10, what="all")
    finally:
        poller.stop()
        running.stop()


def test_a_killed_web_server_is_restarted_with_none_of_its_processes_left_behind(
    live_database, tmp_path, quiet_heartbeats
):
    # Two web processes: when the uvicorn master is killed, its workers must go too.
    running = Running(tmp_path, "--workers", "2")
    try:
        children = running.wait_all_up()
        web = leader_of(children, b"uvicorn\x00getmcp")
        web_group = {pid for pid in children if os.getpgid(pid) == web}
        worker = leader_of(children, *WORKER)
        assert web and worker and len(web_group) >= 3
        os.kill(web, signal.SIGKILL)
        wait_until(lambda: not any(alive(pid) for pid in web_group), timeout=30, what="web group")
        wait_until(running.answers, timeout=60, what=f"the web server\n{running.log.read_text()}")
        assert alive(worker) and running.process.poll() is None
        assert "the web process exited (code -9); restarting it in 1 s" in running.log.read_text()
    finally:
        running.stop()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2", "app.localhost"])
def test_a_loopback_host_turns_on_loopback_upstreams_for_local_development(host):
    run = load_script()
    environ: dict = {}
    notice = run.local_development(host, environ)
    assert environ == {"OUTBOUND_ALLOW_LOOPBACK": "true"}
    assert f"HOST={host} is loopback" in notice and "OUTBOUND_ALLOW_LOOPBACK=false" in notice


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "getmcp.internal"])
def test_a_server_others_can_reach_keeps_loopback_upstreams_refused(host):
    run = load_script()
    environ: dict = {}
    assert run.local_development(host, environ) is None
    assert environ == {}


def test_an_explicit_loopback_setting_is_kept_as_given():
    run = load_script()
    environ = {"OUTBOUND_ALLOW_LOOPBACK": "false"}
    assert run.local_development("127.0.0.1", environ) is None
    assert environ == {"OUTBOUND_ALLOW_LOOPBACK": "false"}


def test_make_run_on_loopback_prints_the_switch_and_serves_with_it(tmp_path):
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "TEST_DB_NAME", "OUTBOUND_ALLOW_LOOPBACK")
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def healthy() -> bool:
            try:
                return httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).is_success
            except httpx2.HTTPError:
                return False

        wait_until(healthy, timeout=60, what=f"the embedded server\n{log.read_text()}")
        assert "OUTBOUND_ALLOW_LOOPBACK=true" in log.read_text()
        # The script became the server (execv): the switch is in the serving process itself.
        environ = Path(f"/proc/{process.pid}/environ").read_bytes().split(b"\0")
        assert b"OUTBOUND_ALLOW_LOOPBACK=true" in environ
    finally:
        process.terminate()
        process.wait(20)


def test_a_process_that_never_starts_stops_the_others_and_run_exits_non_zero(
    live_database, tmp_path, quiet_heartbeats
):
    running = None
    with socket.socket() as taken:  # the web server's port is in use: no use retrying forever
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        running = Running(tmp_path, port=taken.getsockname()[1])
        try:
            assert running.process.wait(180) == 3  # uvicorn's code for a failed start
            log = running.log.read_text()
            assert "the web process exited (code 3) 5 times without starting well" in log
            assert log.count("restarting the web process") == 4
        finally:
            running.stop()
