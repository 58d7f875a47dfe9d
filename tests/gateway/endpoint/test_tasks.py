"""MCP Tasks through /mcp/<slug> end to end: a real uvicorn, a real Celery worker process, both
task designs (2025-11-25 core tasks in a session; the 2026-07-28 tasks extension, stateless)."""

import json
import threading

import httpx2
import pytest

from accounts.models import ApiKey
from servers.definition import import_definition
from tests.celery_workers import SharedWorker, running_workers, wait_until
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import ACCEPT_BOTH, RawMcp, messages_of, parse_sse

MODERN = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"extensions": {EXTENSION: {}}, "elicitation": {}}
OPTIONAL = {"taskSupport": "optional"}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def _elicit(message: str, into: str) -> dict:
    return {"elicit": {"message": message, "requestedSchema": NAME_SCHEMA, "into": into}}


def _text(text: str) -> dict:
    return {"return": {"content": [{"type": "text", "text": text}]}}


TASK_TOOLS = [
    {
        "name": "quick",
        "description": "Works a little, then answers.",
        "inputSchema": {"type": "object", "properties": {"label": {"type": "string"}}},
        "execution": OPTIONAL,
        "kind": "workflow",
        "config": {"steps": [{"sleep": {"ms": 300}}, _text("quick {{ label }}")]},
    },
    {
        "name": "stepping",
        "description": "Reports its progress while it works.",
        "inputSchema": {"type": "object"},
        "execution": OPTIONAL,
        "kind": "workflow",
        "config": {
            "steps": [
                {"sleep": {"ms": 500}},
                {"progress": {"progress": 1, "total": 2, "message": "Halfway"}},
                {"sleep": {"ms": 300}},
                _text("stepped"),
            ]
        },
    },
    {
        "name": "endless",
        "description": "Works until cancelled.",
        "inputSchema": {"type": "object"},
        "execution": OPTIONAL,
        "kind": "workflow",
        "config": {"steps": [{"sleep": {"ms": 60000}}, _text("never")]},
    },
    {
        "name": "two_names",
        "description": "Asks two questions at once.",
        "inputSchema": {"type": "object"},
        "execution": OPTIONAL,
        "kind": "workflow",
        "config": {
            "steps": [
                {"all": {"steps": [_elicit("First?", "first"), _elicit("Last?", "last")]}},
                _text("{{ first.content.name }} {{ last.content.name }}"),
            ]
        },
    },
    {
        "name": "named_job",
        "description": "Asks a name in the request, then goes on as a task.",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "required"},
        "kind": "workflow",
        "config": {
            "steps": [
                _elicit("Name?", "who"),
                {"task": {}},
                _text("job for {{ who.content.name }}"),
            ]
        },
    },
]


@pytest.fixture(scope="module")
def shared_worker(live_database, tmp_path_factory):
    with running_workers(tmp_path_factory.mktemp("workers")) as start:
        yield SharedWorker(start)


@pytest.fixture
def worker(shared_worker):
    """A worker alive (tasks of each test belong to its own tenant, so sharing one is safe)."""
    return shared_worker.alive()


@pytest.fixture
def own_worker(shared_worker, tmp_path):
    """The only worker alive, started for this test: its log shows only this test's runs."""
    shared_worker.stop()
    with running_workers(tmp_path) as start:
        yield start()


@pytest.fixture
def tasks_tenant(committed, tenant, unique):
    def make():
        definition = server_definition(f"tk-{unique}", tools=TASK_TOOLS)
        tenant.tasks_server = import_definition(definition, tenant.org)
        tenant.tasks_slug = tenant.tasks_server.slug
        _key, tenant.other_raw = ApiKey.issue(tenant.org, "another key")
        return tenant

    return committed(make)


# -- a raw 2026-07-28 client ----------------------------------------------------------------------


class Modern:
    NAME_PARAMS = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId"}

    def __init__(self, url: str, key: str, capabilities=None):
        self.url = url
        self.key = key
        self.capabilities = WITH_TASKS if capabilities is None else capabilities
        self.http = httpx2.Client(timeout=30)
        self.next_id = 0

    def body(self, method: str, params: dict | None) -> dict:
        params = dict(params or {})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}

    def headers(self, method: str, params: dict | None) -> dict:
        headers = {
            "content-type": "application/json",
            "accept": ACCEPT_BOTH,
            "authorization": f"Bearer {self.key}",
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        name = (params or {}).get(self.NAME_PARAMS.get(method, "taskId"))
        if isinstance(name, str):
            headers["mcp-name"] = name
        return headers

    def send(self, method: str, params=None) -> tuple[int, dict]:
        response = self.http.post(
            self.url,
            content=json.dumps(self.body(method, params)),
            headers=self.headers(method, params),
        )
        return response.status_code, messages_of(response)[-1]

    def result(self, method: str, params=None) -> dict:
        status, message = self.send(method, params)
        assert status == 200 and "result" in message, message
        return message["result"]

    def error(self, method: str, params=None) -> tuple[int, dict]:
        status, message = self.send(method, params)
        assert "error" in message, message
        return status, message["error"]

    def poll(self, task_id: str, until, timeout=30.0) -> dict:
        def check():
            task = self.result("tasks/get", {"taskId": task_id})
            return task if until(task) else None

        return wait_until(check, timeout=timeout, interval=0.2, what=f"task {task_id}")


def done(task: dict) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


@pytest.fixture
def modern(asgi_server, tasks_tenant):
    return Modern(asgi_server.mcp_url(tasks_tenant.tasks_slug), tasks_tenant.raw)


# -- 2026-07-28: the extension --------------------------------------------------------------------


def test_discover_names_the_extension_only_for_a_server_with_task_tools(
    modern, asgi_server, tasks_tenant
):
    assert EXTENSION in modern.result("server/discover")["capabilities"]["extensions"]
    plain = Modern(asgi_server.mcp_url(tasks_tenant.slug), tasks_tenant.raw)
    assert "extensions" not in plain.result("server/discover")["capabilities"]


def test_a_call_declaring_the_extension_becomes_a_task_a_worker_completes(modern, worker):
    created = modern.result("tools/call", {"name": "quick", "arguments": {"label": "a"}})
    assert created["resultType"] == "task"
    assert created["status"] == "working" and created["ttlMs"] > 0
    assert modern.result("tasks/get", {"taskId": created["taskId"]})["status"] == "working"
    task = modern.poll(created["taskId"], done)
    assert task["status"] == "completed"
    assert task["resultType"] == "complete"
    assert task["result"]["content"] == [{"type": "text", "text": "quick a"}]


def test_a_call_without_the_extension_answers_inline(asgi_server, tasks_tenant):
    plain = Modern(asgi_server.mcp_url(tasks_tenant.tasks_slug), tasks_tenant.raw, {})
    result = plain.result("tools/call", {"name": "quick", "arguments": {"label": "b"}})
    assert result["resultType"] == "complete"
    assert result["content"] == [{"type": "text", "text": "quick b"}]
    status, error = plain.error("tools/call", {"name": "named_job", "arguments": {}})
    assert status == 400 and error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    status, error = plain.error("tasks/get", {"taskId": "anything"})
    assert error["code"] == -32021


def test_cancel_acknowledges_and_the_worker_stops(modern, own_worker):
    worker = own_worker
    created = modern.result("tools/call", {"name": "endless", "arguments": {}})
    wait_until(lambda: "claimed" in worker.log() or "received" in worker.log(), what="a claim")
    ack = modern.result("tasks/cancel", {"taskId": created["taskId"]})
    assert set(ack) <= {"resultType", "_meta"} and ack["resultType"] == "complete"
    assert modern.result("tasks/get", {"taskId": created["taskId"]})["status"] == "cancelled"
    wait_until(lambda: "succeeded" in worker.log(), timeout=15, what="the run to stop")
    # Cancelling again is acknowledged the same way (the extension makes it idempotent).
    assert modern.result("tasks/cancel", {"taskId": created["taskId"]})["resultType"] == "complete"


def test_questions_asked_together_are_answered_with_tasks_update(modern, worker):
    created = modern.result("tools/call", {"name": "two_names", "arguments": {}})
    task = modern.poll(created["taskId"], lambda t: len(t.get("inputRequests") or {}) == 2)
    assert task["status"] == "input_required"
    assert {r["method"] for r in task["inputRequests"].values()} == {"elicitation/create"}
    answer = {"action": "accept", "content": {"name": "Ada"}}
    modern.result(
        "tasks/update", {"taskId": created["taskId"], "inputResponses": {"first": answer}}
    )
    pending = modern.result("tasks/get", {"taskId": created["taskId"]})
    assert pending["status"] == "input_required" and list(pending["inputRequests"]) == ["last"]
    last = {"action": "accept", "content": {"name": "Lovelace"}}
    modern.result("tasks/update", {"taskId": created["taskId"], "inputResponses": {"last": last}})
    task = modern.poll(created["taskId"], done)
    assert task["result"]["content"][0]["text"] == "Ada Lovelace"


def test_a_task_step_asks_through_mrtr_before_the_task_begins(modern, worker):
    first = modern.result("tools/call", {"name": "named_job", "arguments": {}})
    assert first["resultType"] == "input_required" and "taskId" not in first
    answer = {"action": "accept", "content": {"name": "Grace"}}
    created = modern.result(
        "tools/call",
        {
            "name": "named_job",
            "arguments": {},
            "inputResponses": {"who": answer},
            "requestState": first["requestState"],
        },
    )
    assert created["resultType"] == "task" and "requestState" not in created
    task = modern.poll(created["taskId"], done)
    assert task["result"]["content"][0]["text"] == "job for Grace"


def test_another_credential_sees_nothing_of_a_task(modern, asgi_server, tasks_tenant, worker):
    created = modern.result("tools/call", {"name": "endless", "arguments": {}})
    other = Modern(asgi_server.mcp_url(tasks_tenant.tasks_slug), tasks_tenant.other_raw)
    for method, extra in (("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"x": 1})):
        params = {"taskId": created["taskId"], **({"inputResponses": extra} if extra else {})}
        _status, error = other.error(method, params)
        assert error["code"] == -32602
    assert modern.result("tasks/get", {"taskId": created["taskId"]})["status"] == "working"
    modern.result("tasks/cancel", {"taskId": created["taskId"]})


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_the_removed_core_methods_are_not_found(modern, method):
    status, error = modern.error(method, {"taskId": "x"})
    assert (status, error["code"]) == (404, -32601)


def test_listen_relays_the_status_of_the_callers_tasks(modern, worker):
    created = modern.result("tools/call", {"name": "quick", "arguments": {"label": "l"}})
    params = {"notifications": {"taskIds": [created["taskId"], "not-a-task-of-mine"]}}
    body = modern.body("subscriptions/listen", params)
    seen: list[dict] = []

    def listen():
        headers = modern.headers("subscriptions/listen", params)
        with modern.http.stream("POST", modern.url, content=json.dumps(body), headers=headers) as r:
            buffer = ""
            for chunk in r.iter_text():
                buffer += chunk
                for event in parse_sse(buffer):
                    if isinstance(event["data"], dict) and event["data"] not in seen:
                        seen.append(event["data"])
                if any(m.get("params", {}).get("status") == "completed" for m in seen):
                    return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    thread.join(30)
    ack, *notes = seen
    assert ack["params"]["notifications"]["taskIds"] == [created["taskId"]]
    assert notes[-1]["method"] == "notifications/tasks"
    assert notes[-1]["params"]["taskId"] == created["taskId"]
    assert notes[-1]["params"]["result"]["content"][0]["text"] == "quick l"
    assert notes[-1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == body["id"]


def test_listen_for_tasks_without_the_extension_is_refused(asgi_server, tasks_tenant):
    plain = Modern(asgi_server.mcp_url(tasks_tenant.tasks_slug), tasks_tenant.raw, {})
    status, error = plain.error("subscriptions/listen", {"notifications": {"taskIds": ["t"]}})
    assert (status, error["code"]) == (400, -32021)


# -- 2025-11-25: core tasks in a session ----------------------------------------------------------


@pytest.fixture
def session(asgi_server, tasks_tenant):
    client = RawMcp(asgi_server.mcp_url(tasks_tenant.tasks_slug), key=tasks_tenant.raw)
    client.capabilities = client.initialize({"elicitation": {}})["capabilities"]
    return client


def core_poll(client, task_id, until, timeout=30.0) -> dict:
    def check():
        task = client.call("tasks/get", {"taskId": task_id})["result"]
        return task if until(task) else None

    return wait_until(check, timeout=timeout, interval=0.2, what=f"task {task_id}")


def test_a_session_declares_tasks_and_a_task_call_completes_on_a_worker(session, worker):
    assert session.capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
    created = session.call(
        "tools/call", {"name": "quick", "arguments": {"label": "s"}, "task": {"ttl": 60000}}
    )["result"]
    task_id = created["task"]["taskId"]
    assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60000
    assert core_poll(session, task_id, done)["status"] == "completed"
    result = session.call("tasks/result", {"taskId": task_id})["result"]
    assert result["content"] == [{"type": "text", "text": "quick s"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    listed = session.call("tasks/list", {})["result"]["tasks"]
    assert [task["taskId"] for task in listed] == [task_id]


def test_a_session_without_the_task_param_cannot_call_a_required_tool(session):
    error = session.call("tools/call", {"name": "named_job", "arguments": {}})["error"]
    assert error["code"] == -32601


def test_a_session_cancels_a_task(session, worker):
    created = session.call("tools/call", {"name": "endless", "arguments": {}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    cancelled = session.call("tasks/cancel", {"taskId": task_id})["result"]
    assert cancelled["status"] == "cancelled"
    assert session.call("tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602
    assert session.call("tasks/result", {"taskId": task_id})["error"]["code"] == -32603


def test_tasks_result_asks_the_client_on_its_stream_then_answers(session, worker):
    created = session.call("tools/call", {"name": "two_names", "arguments": {}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    core_poll(session, task_id, lambda task: task["status"] == "input_required")
    message = {"jsonrpc": "2.0", "id": 77, "method": "tasks/result", "params": {"taskId": task_id}}
    final = None
    names = {"First?": "Ada", "Last?": "Lovelace"}
    with session.http.stream(
        "POST", session.url, content=json.dumps(message), headers=session.headers()
    ) as response:
        buffer = ""
        handled = set()
        for chunk in response.iter_text():
            buffer += chunk
            for event in parse_sse(buffer):
                data = event["data"]
                if not isinstance(data, dict):
                    continue
                if data.get("method") == "elicitation/create" and data["id"] not in handled:
                    handled.add(data["id"])
                    answer = {
                        "action": "accept",
                        "content": {"name": names[data["params"]["message"]]},
                    }
                    reply = {"jsonrpc": "2.0", "id": data["id"], "result": answer}
                    assert session.post(reply).status_code == 202
                if data.get("id") == 77:
                    final = data
            if final is not None:
                break
    assert final["result"]["content"][0]["text"] == "Ada Lovelace"


def test_another_credential_sees_no_session_task(session, asgi_server, tasks_tenant, worker):
    created = session.call("tools/call", {"name": "endless", "arguments": {}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    other = RawMcp(asgi_server.mcp_url(tasks_tenant.tasks_slug), key=tasks_tenant.other_raw)
    other.initialize()
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert other.call(method, {"taskId": task_id})["error"]["code"] == -32602
    assert other.call("tasks/list", {})["result"]["tasks"] == []
    session.call("tasks/cancel", {"taskId": task_id})


def test_a_task_created_in_a_session_is_served_to_the_same_key_statelessly(session, modern, worker):
    created = session.call("tools/call", {"name": "quick", "arguments": {"label": "x"}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    task = modern.poll(task_id, done)
    assert task["result"]["content"][0]["text"] == "quick x"


def test_a_session_hears_the_status_of_its_task_on_the_get_stream(session, worker):
    created = session.call("tools/call", {"name": "quick", "arguments": {"label": "g"}, "task": {}})
    task_id = created["result"]["task"]["taskId"]
    seen: list[dict] = []

    def listen():
        headers = {**session.headers(), "accept": "text/event-stream"}
        with session.http.stream("GET", session.url, headers=headers) as response:
            buffer = ""
            for chunk in response.iter_text():
                buffer += chunk
                seen[:] = [e["data"] for e in parse_sse(buffer) if isinstance(e["data"], dict)]
                if any(m.get("params", {}).get("status") == "completed" for m in seen):
                    return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    thread.join(30)
    statuses = [m["params"] for m in seen if m.get("method") == "notifications/tasks/status"]
    assert statuses[-1]["taskId"] == task_id and statuses[-1]["status"] == "completed"
    assert statuses[-1]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


def test_a_session_hears_a_tasks_progress_under_the_calls_progress_token(session, worker):
    created = session.call(
        "tools/call",
        {"name": "stepping", "arguments": {}, "task": {}, "_meta": {"progressToken": "p-7"}},
    )
    task_id = created["result"]["task"]["taskId"]
    seen: list[dict] = []

    def listen():
        headers = {**session.headers(), "accept": "text/event-stream"}
        with session.http.stream("GET", session.url, headers=headers) as response:
            buffer = ""
            for chunk in response.iter_text():
                buffer += chunk
                seen[:] = [e["data"] for e in parse_sse(buffer) if isinstance(e["data"], dict)]
                if any(m.get("params", {}).get("status") == "completed" for m in seen):
                    return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    thread.join(30)
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert progress == [
        {
            "progressToken": "p-7",
            "progress": 1,
            "total": 2,
            "message": "Halfway",
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": task_id}},
        }
    ]


def test_a_session_of_an_older_version_has_no_tasks(asgi_server, tasks_tenant):
    client = RawMcp(asgi_server.mcp_url(tasks_tenant.tasks_slug), key=tasks_tenant.raw)
    capabilities = client.initialize(version="2025-06-18")["capabilities"]
    assert "tasks" not in capabilities
    assert client.call("tasks/get", {"taskId": "x"})["error"]["code"] == -32601
    result = client.call("tools/call", {"name": "quick", "arguments": {"label": "o"}, "task": {}})
    assert result["result"]["content"] == [{"type": "text", "text": "quick o"}]


# -- no worker alive: refused at once (getmcp/heartbeat.py) ---------------------------------------


@pytest.fixture
def no_worker(shared_worker):
    from getmcp import heartbeat
    from infra.redis import sync_client

    shared_worker.stop()
    sync_client().delete(heartbeat.WORKERS_KEY)


def assert_no_worker_error(error: dict) -> None:
    assert error["code"] == -32603
    assert error["data"] == {"reason": "no-task-worker"}
    assert "No task worker is running" in error["message"]


def test_with_no_worker_alive_a_stateless_task_call_is_refused_at_once(modern, no_worker):
    _status, error = modern.error("tools/call", {"name": "quick", "arguments": {"label": "x"}})
    assert_no_worker_error(error)


def test_with_no_worker_alive_a_session_task_call_is_refused_and_nothing_is_queued(
    session, no_worker
):
    error = session.call(
        "tools/call", {"name": "quick", "arguments": {"label": "x"}, "task": {"ttl": 60000}}
    )["error"]
    assert_no_worker_error(error)
    assert session.call("tasks/list", {})["result"]["tasks"] == []
    # The same tool called without `task` still answers inline: only tasks need a worker.
    inline = session.call("tools/call", {"name": "quick", "arguments": {"label": "y"}})
    assert inline["result"]["content"] == [{"type": "text", "text": "quick y"}]


def test_a_task_call_runs_while_a_worker_lives_and_is_refused_once_it_stopped(
    session, no_worker, live_database, tmp_path
):
    with running_workers(tmp_path) as start:
        worker = start()
        created = session.call(
            "tools/call", {"name": "quick", "arguments": {"label": "w"}, "task": {"ttl": 60000}}
        )["result"]
        assert core_poll(session, created["task"]["taskId"], done)["status"] == "completed"
        worker.stop()
    error = session.call(
        "tools/call", {"name": "quick", "arguments": {"label": "z"}, "task": {"ttl": 60000}}
    )["error"]
    assert_no_worker_error(error)


def test_the_rest_surface_runs_a_task_tool_inline_and_needs_no_worker(
    asgi_server, tasks_tenant, no_worker
):
    response = httpx2.post(
        asgi_server.mcp_url(tasks_tenant.tasks_slug) + "/tools/quick",
        json={"label": "r"},
        headers={"authorization": f"Bearer {tasks_tenant.raw}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"] == "quick r"
