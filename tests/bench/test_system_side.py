"""bench/system_side.py: the whole-system side sums every process the platform needs, each once."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import system_side  # noqa: E402  (bench/ is scripts, not a package)
from process_cpu import Proc  # noqa: E402


def run_script_commands(monkeypatch) -> dict[str, list[str]]:
    """The command lines scripts/run.py (`make run`) starts its processes with, with REDIS_URL."""
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    spec = importlib.util.spec_from_file_location("getmcp_run_script", ROOT / "scripts/run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.commands("127.0.0.1", 8000, 1, ROOT / "var" / "celerybeat-schedule")


def test_the_supervisors_children_are_told_apart_by_the_commands_make_run_starts(monkeypatch):
    commands = run_script_commands(monkeypatch)
    assert set(commands) == {"web", "worker", "beat"}
    children = {100 + n: " ".join(command) for n, command in enumerate(commands.values())}
    by_pid = {" ".join(command): name for name, command in commands.items()}
    found = system_side.supervised(children)
    assert {name: by_pid[children[pid]] for name, pid in found.items()} == {
        "web": "web",
        "worker": "worker",
        "beat": "beat",
    }


def test_the_whole_system_adds_up_web_worker_pool_beat_supervisor_redis_and_postgres_once():
    supervisor, web, worker, pool, beat, redis, postmaster, backend, stranger = range(10, 19)
    processes = {
        supervisor: Proc(supervisor, 1, own=0.001, reaped=0.0),
        web: Proc(web, supervisor, own=1.0, reaped=0.0),
        worker: Proc(worker, supervisor, own=0.1, reaped=0.0),
        pool: Proc(pool, worker, own=0.4, reaped=0.0),
        beat: Proc(beat, supervisor, own=0.01, reaped=0.0),
        redis: Proc(redis, 1, own=0.05, reaped=0.0),
        # A backend that ended was reaped by the postmaster: in its reaped time.
        postmaster: Proc(postmaster, 1, own=0.02, reaped=0.2),
        backend: Proc(backend, postmaster, own=0.08, reaped=0.0),
        stranger: Proc(stranger, 1, own=100.0, reaped=0.0),
    }
    roots = {
        "web": web,
        "worker": worker,
        "beat": beat,
        "supervisor": supervisor,
        "redis": redis,
        "postgres": postmaster,
    }
    assert set(roots) == set(system_side.COMPONENTS)
    parts = system_side.process_cpu.components_seconds(roots, processes)
    assert parts == {
        "web": 1.0,
        "worker": 0.5,
        "beat": 0.01,
        "supervisor": 0.001,
        "redis": 0.05,
        "postgres": 0.3,
    }
    everything_but_the_stranger = sum(p.own + p.reaped for p in processes.values()) - 100.0
    assert abs(sum(parts.values()) - everything_but_the_stranger) < 1e-9
