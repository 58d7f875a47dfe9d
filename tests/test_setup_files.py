"""The set-up files: Celery app, container health check, compose file, Makefile, benchmark server."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from servers.definition import load_file, validate_definition
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = ("migrate", "web", "worker", "worker-platform", "beat")


def healthcheck(url: str) -> int:
    script = ROOT / "scripts" / "healthcheck.py"
    return subprocess.run([sys.executable, str(script), url], capture_output=True).returncode


def make_dry_run(target: str, **env: str) -> str:
    # Under `make test` the outer make's variables would make this one print "Entering/Leaving
    # directory" lines around the recipes; it must answer as if run by hand.
    outer = ("DATABASE_URL", "REDIS_URL", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")
    environment = {k: v for k, v in os.environ.items() if k not in outer}
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=ROOT,
        env=environment | env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def test_the_celery_app_takes_its_configuration_from_django_settings():
    from getmcp.celery import app

    assert app.main == "getmcp"
    assert app.conf.broker_url == settings.CELERY_BROKER_URL
    assert app.conf.beat_schedule == settings.CELERY_BEAT_SCHEDULE


def project_task_names() -> set[str]:
    """Names of the Celery tasks defined in the project's tasks modules."""
    from celery.app.task import Task

    names = set()
    for path in ROOT.glob("*/**/tasks.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in {"tests", ".venv", ".node"}:
            continue
        module = importlib.import_module(".".join(relative.with_suffix("").parts))
        names |= {v.name for v in vars(module).values() if isinstance(v, Task)}
    return names


def test_a_worker_knows_every_task_the_project_defines_or_schedules():
    # A fresh process, as a worker starts: only what the Celery app itself imports counts.
    listing = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from getmcp.celery import app; "
            "app.loader.import_default_modules(); print('\\n'.join(app.tasks))",
        ],
        cwd=ROOT,
        env=os.environ | {"DJANGO_SETTINGS_MODULE": "getmcp.settings"},
        capture_output=True,
        text=True,
        check=True,
    )
    registered = set(listing.stdout.split())
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    defined = project_task_names()
    assert defined, "no Celery task found in the project"
    assert scheduled | defined <= registered


def test_the_health_check_calls_an_app_answering_below_500_healthy(httpserver):
    httpserver.expect_request("/login/").respond_with_data("a page", status=200)
    httpserver.expect_request("/disallowed-host/").respond_with_data("bad host", status=400)
    assert healthcheck(httpserver.url_for("/login/")) == 0
    assert healthcheck(httpserver.url_for("/disallowed-host/")) == 0


def test_the_health_check_calls_a_failing_or_absent_app_unhealthy(httpserver):
    httpserver.expect_request("/login/").respond_with_data("boom", status=500)
    assert healthcheck(httpserver.url_for("/login/")) == 1
    # Absent: a loopback port nothing listens on (the session's shared server stays up; a
    # restarted one would be a new thread outliving this test).
    assert healthcheck(f"http://127.0.0.1:{free_port()}/login/") == 1


def test_compose_runs_every_service_with_a_health_check_and_configures_apps_by_environment():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "caddy", *APP_SERVICES}
    for name, service in services.items():
        if name != "migrate":
            assert service["healthcheck"]["test"], name
    for name in APP_SERVICES:
        environment = services[name]["environment"]
        assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ALLOWED_HOSTS"} <= set(environment)
    # uvicorn's worker with the slowloris header deadline (getmcp/http_protocol.py).
    assert "getmcp.http_protocol.UvicornWorker" in " ".join(services["web"]["command"])
    assert "getmcp.asgi:application" in services["web"]["command"]
    for name in ("web", "worker", "worker-platform", "beat"):
        migrate = services[name]["depends_on"]["migrate"]
        assert migrate["condition"] == "service_completed_successfully"


def settings_read_from_the_environment() -> set[str]:
    """Every variable getmcp reads: those declared in getmcp/environment/ (no other module reads
    the environment: tests/getmcp/test_environment.py)."""
    from getmcp.environment import Environment

    return set(Environment.declared())


# Read by the test runner only, never by a deployed container.
NOT_FOR_CONTAINERS = {"TEST_DB_NAME"}


def test_every_setting_of_the_settings_module_reaches_the_app_containers():
    text = (ROOT / "docker-compose.yml").read_text()
    services = yaml.safe_load(text)["services"]
    from getmcp.environment import deployed_names

    expected = deployed_names()
    assert expected == settings_read_from_the_environment() - NOT_FOR_CONTAINERS
    assert len(expected) > 80 and {"METRICS_TOKEN", "OAUTH_ISSUER", "CODE_MAX_CPU_SECONDS"} <= (
        expected
    )
    for name in APP_SERVICES:
        service = services[name]
        environment = service["environment"]
        assert expected <= set(environment), (name, sorted(expected - set(environment)))
        # .env reaches them whole, and may be absent.
        assert service["env_file"] == [{"path": ".env", "required": False}]
        # A setting passed through without a value stays unset when not given (settings.py's
        # default applies); an empty string would replace the default and break int("").
        for variable, value in environment.items():
            assert value != "", variable
    assert ":-}" not in text


def test_compose_serves_web_with_the_gunicorn_config_of_the_image():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    command = services["web"]["command"]
    assert "--config=python:getmcp.gunicorn_conf" in command
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert '"-c", "python:getmcp.gunicorn_conf"' in dockerfile
    import getmcp.gunicorn_conf as conf

    assert callable(conf.on_starting) and callable(conf.child_exit)


def test_the_tls_proxy_is_an_opt_in_profile_with_the_caddyfile_it_mounts():
    caddy = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["caddy"]
    assert caddy["profiles"] == ["tls"]
    mounted = [v.split(":")[0] for v in caddy["volumes"] if v.startswith("./")]
    assert mounted == ["./deploy/Caddyfile"] and (ROOT / "deploy" / "Caddyfile").is_file()
    assert caddy["depends_on"]["web"]["condition"] == "service_healthy"


def test_compose_restarts_every_long_running_process_and_keeps_redis_append_only():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        assert service["restart"] == ("no" if name == "migrate" else "unless-stopped"), name
    # What a Redis restart costs assumes its data comes back (docs/operations.md).
    assert services["redis"]["command"][-2:] == ["--appendonly", "yes"]


def test_the_celery_broker_is_kombus_redis_transport_that_survives_a_redis_restart():
    from getmcp.celery import app
    from infra.broker import Transport

    assert settings.REDIS_URL.startswith("redis://")
    assert settings.CELERY_BROKER_TRANSPORT == "infra.broker:Transport"
    with app.connection_for_read() as connection:
        assert isinstance(connection.transport, Transport)


def queues_of(command: list[str] | str) -> set[str]:
    words = command if isinstance(command, list) else command.split()
    return set(words[words.index("-Q") + 1].split(","))


def test_platform_jobs_and_mcp_tasks_go_to_queues_that_compose_consumes_with_separate_pools():
    from getmcp.celery import app

    declared = set(settings.CELERY_TASK_QUEUES)
    assert declared == {"platform", "mcp"}
    assert app.amqp.router.route({}, "mcptasks.run_tool")["queue"].name == "mcp"
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert app.amqp.router.route({}, entry["task"])["queue"].name == "platform"
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert queues_of(services["worker"]["command"]) == {"mcp"}
    assert queues_of(services["worker-platform"]["command"]) == {"platform"}


def test_a_scheduled_job_expires_rather_than_run_later_than_its_own_interval():
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert entry["options"]["expires"] == float(entry["schedule"]), name


def test_make_worker_consumes_both_queues_and_each_pool_target_one():
    assert queues_of(make_dry_run("worker").splitlines()[-1]) == {"platform", "mcp"}
    assert queues_of(make_dry_run("worker-platform").splitlines()[-1]) == {"platform"}
    assert queues_of(make_dry_run("worker-mcp").splitlines()[-1]) == {"mcp"}


def test_make_run_installs_migrates_sets_up_the_demo_and_serves_in_that_order():
    commands = make_dry_run("run").splitlines()
    steps = ["pip install --quiet -c requirements.lock -e .", "manage.py migrate"]
    steps += ["manage.py demo", "scripts/run.py"]
    positions = [next(i for i, line in enumerate(commands) if step in line) for step in steps]
    assert positions == sorted(positions)
    assert commands[positions[-1]].endswith(
        "scripts/run.py --host 127.0.0.1 --port 8000 --workers 1"
    )


def environment_of_recipes(target: str, tmp_path: Path) -> set[str]:
    """What DATABASE_URL and REDIS_URL each recipe line of `make TARGET` would run with.

    make's shell is swapped for one that prints them instead of running the line.
    """
    shell = tmp_path / "probe-shell"
    shell.write_text('#!/bin/sh\nprintf "%s|%s\\n" "$DATABASE_URL" "$REDIS_URL"\n')
    shell.chmod(0o755)
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    result = subprocess.run(
        ["make", "-B", "-s", target, f"SHELL={shell}"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(result.stdout.split())


def test_make_run_stays_embedded_while_make_test_defaults_to_local_postgres_and_redis(tmp_path):
    assert environment_of_recipes("run", tmp_path) == {"|"}
    assert environment_of_recipes("test", tmp_path) == {
        "postgres://postgres@127.0.0.1:5432/test|redis://127.0.0.1:6379/0"
    }


@pytest.mark.parametrize("definition", ["bench/getmcp_server.yaml"])
def test_the_benchmark_server_is_a_valid_definition_with_the_echo_tool(definition):
    data = load_file(ROOT / definition)
    assert validate_definition(data) == []
    assert data["auth"] == "none"
    assert [tool["name"] for tool in data["tools"]] == ["echo"]


def make_run_environment(tmp_path: Path, *args: str, **env: str) -> dict:
    """SITE_URL and ALLOWED_HOSTS as `make run ARGS` hands them to its commands."""
    probe = tmp_path / "probe-python"
    probe.write_text('#!/bin/sh\necho "$SITE_URL $ALLOWED_HOSTS"\n')
    probe.chmod(0o755)
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SITE_URL")
    }
    result = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "run", f"PY={probe}", *args],
        cwd=ROOT,
        env=environment | env,
        capture_output=True,
        text=True,
        check=True,
    )
    site_url, allowed = result.stdout.splitlines()[-1].split()
    return {"SITE_URL": site_url, "ALLOWED_HOSTS": allowed.split(",")}


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1", "getmcp.internal"])
def test_make_run_prints_urls_whose_host_it_answers_to(tmp_path, host):
    from urllib.parse import urlsplit

    from django.http.request import split_domain_port, validate_host

    env = make_run_environment(tmp_path, f"HOST={host}", "PORT=9123")
    url = urlsplit(env["SITE_URL"])
    assert url.port == 9123 and url.hostname not in ("0.0.0.0", "")
    domain, _port = split_domain_port(url.netloc)
    assert validate_host(domain, env["ALLOWED_HOSTS"])
    assert {"localhost", "127.0.0.1"} <= set(env["ALLOWED_HOSTS"])


def test_make_run_adds_its_host_to_the_allowed_hosts_one_gives(tmp_path):
    env = make_run_environment(tmp_path, "HOST=b.example", ALLOWED_HOSTS="a.example")
    assert env["ALLOWED_HOSTS"] == ["a.example", "b.example"]


def test_make_help_lists_every_target_meant_for_people():
    listed = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    for target in ["run", "test", "lint", "format", "lock", "check-install", "conformance"]:
        assert f"make {target} " in listed, target
    for target in ["bench", "worker", "beat", "migrate", "demo", "services", "multihost"]:
        assert f"make {target} " in listed, target


def test_make_doctor_checks_the_site_make_run_serves_on_the_same_port(tmp_path):
    probe = tmp_path / "probe-python"
    probe.write_text('#!/bin/sh\necho "$SITE_URL $*"\n')
    probe.chmod(0o755)
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "SITE_URL")
    }
    result = subprocess.run(
        ["make", "-s", "-o", ".venv/.installed", "doctor", f"PY={probe}", "PORT=9123"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == [
        "http://127.0.0.1:9123",
        "manage.py",
        "server",
        "doctor",
        "demo",
    ]
    assert make_run_environment(tmp_path, "PORT=9123")["SITE_URL"] == "http://127.0.0.1:9123"


def test_an_env_file_of_settings_stays_out_of_the_image_and_the_repository():
    ignored_by_docker = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored_by_docker
    assert "/.env" in (ROOT / ".gitignore").read_text().split()
