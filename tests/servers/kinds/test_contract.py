"""What each kind's contract declares is what the rest of the product does with its tools:
task support, asking before a task, server-level settings, destinations the outbound guard
judges, the config the dashboard starts with."""

import pytest

from servers.definition import validate_definition
from servers.destination_checks import refusal_warnings
from servers.kinds import KINDS, ToolKind, get_kind
from servers.kinds.static import StaticKind
from servers.snapshot import DefinitionError, compile_definition

# A valid config of each kind (the dashboard's starting configs, checked below, are others).
CONFIGS = {
    "static": {"content": [{"type": "text", "text": "hi"}]},
    "workflow": {"steps": [{"return": {"content": [{"type": "text", "text": "done"}]}}]},
    "http": {"method": "GET", "url": "https://api.example.com/items"},
    "upstream": {"url": "https://mcp.example.com/mcp", "tool": "search"},
    "code": {"language": "python", "source": "def main(args):\n    return 1\n"},
}


def tool(kind: str, **extra) -> dict:
    return {
        "name": "t",
        "description": "A tool.",
        "inputSchema": {"type": "object"},
        "kind": kind,
        "config": CONFIGS.get(kind, CONFIGS["static"]),
        **extra,
    }


def definition(*tools: dict, **extra) -> dict:
    return {"slug": "kinds", "name": "kinds", "tools": list(tools), **extra}


def compile_it(data: dict):
    return compile_definition(data, server_id=1, organization_id=1, generation="1")


def test_the_configs_here_cover_every_kind():
    assert set(CONFIGS) == set(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_compiled_tool_carries_its_kinds_contract(name):
    snapshot = compile_it(definition(tool(name)))
    assert snapshot.tools["t"].kind is KINDS[name]


class NeverATask(StaticKind):
    """A kind that cannot run as a task (every kind so far can)."""

    name = "never_a_task"
    label = "Never a task"
    runs_as_task = False


@pytest.fixture
def never_a_task(monkeypatch):
    kind = NeverATask()
    monkeypatch.setitem(KINDS, kind.name, kind)
    return kind


@pytest.mark.parametrize("support", ["optional", "required"])
@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_kind_declaring_runs_as_task_compiles_a_task_tool(name, support):
    assert KINDS[name].runs_as_task
    data = definition(tool(name, execution={"taskSupport": support}))
    assert compile_it(data).tools["t"].task_support == support
    assert not [e for e in validate_definition(data) if "taskSupport" in e]


@pytest.mark.parametrize("support", ["optional", "required"])
def test_a_kind_that_does_not_run_as_a_task_is_refused_a_task_tool(never_a_task, support):
    data = definition(tool(never_a_task.name, execution={"taskSupport": support}))
    with pytest.raises(DefinitionError, match="taskSupport: a never_a_task tool cannot run"):
        compile_it(data)
    assert "tools[0].execution.taskSupport: a never_a_task tool cannot run as a task" in (
        validate_definition(data)
    )


def test_a_kind_that_does_not_run_as_a_task_still_serves_ordinary_calls(never_a_task):
    snapshot = compile_it(definition(tool(never_a_task.name)))
    assert snapshot.tools["t"].kind is never_a_task
    assert snapshot.tools["t"].task_support == "forbidden"


def test_only_a_workflow_with_a_task_step_asks_before_its_task():
    steps = [
        {"elicit": {"message": "Name?", "requestedSchema": {"type": "object"}, "into": "who"}},
        {"task": {}},
        {"return": {"content": [{"type": "text", "text": "{{ who }}"}]}},
    ]
    with_step = compile_it(definition(tool("workflow", config={"steps": steps})))
    assert with_step.tools["t"].kind.asks_before_task(with_step.tools["t"].compiled)
    for name in KINDS:
        compiled = compile_it(definition(tool(name))).tools["t"]
        assert not compiled.kind.asks_before_task(compiled.compiled), name


@pytest.mark.parametrize(
    "name", sorted(name for name, kind in KINDS.items() if kind.server_settings)
)
def test_a_kinds_server_settings_are_checked_by_the_kind_under_its_key(name):
    kind = KINDS[name]
    key = kind.server_settings
    assert key is not None
    expected = kind.validate_server_settings({"nonsense": 1}, key)
    assert expected, "a wrong setting must be a problem"
    errors = validate_definition(definition(tool("static"), **{key: {"nonsense": 1}}))
    assert set(expected) <= set(errors)


def test_the_kinds_with_server_settings_are_http_and_code():
    assert {k.server_settings for k in KINDS.values()} - {None} == {"http", "code"}


def test_a_server_setting_reaches_the_kinds_compile():
    data = definition(tool("http"), http={"timeoutSeconds": 7})
    assert compile_it(data).tools["t"].compiled.timeout == 7.0
    assert compile_it(definition(tool("http"))).tools["t"].compiled.timeout != 7.0


LOOPBACK = "http://127.0.0.1:9/x"
LOOPBACK_CONFIGS = {
    "http": {"method": "GET", "url": LOOPBACK},
    "upstream": {"url": LOOPBACK, "tool": "search"},
    "workflow": {"steps": [{"http": {"method": "GET", "url": LOOPBACK}}]},
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_only_kinds_declaring_destinations_have_them_judged_at_save(name):
    kind = KINDS[name]
    config = LOOPBACK_CONFIGS.get(name, CONFIGS[name])
    warnings = refusal_warnings({"kind": name, "config": config})
    assert bool(warnings) is kind.has_destinations
    assert bool(list(kind.destinations(config))) is kind.has_destinations


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_dashboards_starting_config_of_each_kind_is_valid_for_it(name):
    kind = KINDS[name]
    config = dict(kind.config_example)
    if not config:
        return  # no starting config: the editor keeps what is there
    if kind.form_source_key:
        config[kind.form_source_key] = kind.form_source_example
    assert kind.validate_config(config) == []
    assert kind.validate_on_save(config) == []


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_kind_with_its_own_form_fields_names_their_template(name):
    from django.template.loader import get_template

    kind = KINDS[name]
    if kind.form_template:
        assert get_template(kind.form_template)
    assert (kind.form_source_key is None) is (not kind.form_source_example)


def test_only_the_http_kind_acts_through_connected_accounts():
    """Its tools declare `connection: {provider, scopes}` (connections/); no kind needs the
    caller's identity beyond that yet."""
    assert {n for n, k in KINDS.items() if k.needs_connection} == {"http"}
    assert not any(k.needs_caller for k in KINDS.values())


def test_the_contract_defaults_are_the_most_modest():
    class Minimal(ToolKind):
        name = "minimal"
        label = "Minimal"

        def validate_config(self, config):
            return []

        def compile(self, tool_def):
            return None

        async def call(self, compiled, arguments, ctx):
            return {"content": []}

    kind = Minimal()
    assert (kind.streams_progress, kind.reads_secrets, kind.has_destinations) == (False,) * 3
    assert kind.server_settings is None and kind.form_template is None
    assert kind.validate_on_save({}) == [] and list(kind.destinations({})) == []
    assert get_kind("static") is not kind
