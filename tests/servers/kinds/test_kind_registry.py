import inspect

import pytest

from servers.kinds import (
    DEFAULT_KIND,
    KINDS,
    ToolKind,
    code,
    find_kind,
    get_kind,
    http,
    static,
    upstream,
    workflow,
)
from servers.kinds.code.kind import KIND as CODE
from servers.kinds.http.kind import KIND as HTTP
from servers.kinds.workflow.kind import KIND as WORKFLOW

PACKAGES = {
    "static": static,
    "workflow": workflow,
    "http": http,
    "upstream": upstream,
    "code": code,
}


def test_the_registry_maps_every_kind_package_to_its_contract():
    assert list(KINDS) == ["static", "workflow", "http", "upstream", "code"]
    assert KINDS == {
        "static": static.KIND,
        "workflow": WORKFLOW,
        "http": HTTP,
        "upstream": upstream.KIND,
        "code": CODE,
    }
    assert get_kind("workflow") is WORKFLOW


def test_every_contract_declared_under_servers_kinds_is_registered():
    """A new kind's contract cannot be left out of the registry (and so out of the endpoint,
    the checks and the dashboard)."""
    import importlib
    import importlib.util
    import pkgutil

    import servers.kinds

    declared = set()
    for info in pkgutil.iter_modules(servers.kinds.__path__):
        module = importlib.import_module(f"servers.kinds.{info.name}")
        if info.ispkg and importlib.util.find_spec(f"{module.__name__}.kind") is not None:
            module = importlib.import_module(f"{module.__name__}.kind")
        if isinstance(getattr(module, "KIND", None), ToolKind):
            declared.add(module.KIND)
    assert declared == set(KINDS.values())


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_contract_is_named_as_it_is_registered(name):
    kind = KINDS[name]
    assert isinstance(kind, ToolKind) and kind.name == name
    assert kind.label and isinstance(kind.label, str)


def test_an_unknown_kind_is_a_clear_value_error():
    with pytest.raises(ValueError, match="Unknown tool kind 'nope'"):
        get_kind("nope")
    assert find_kind("nope") is None and find_kind(["http"]) is None


def test_a_definition_without_a_kind_is_static():
    assert get_kind(DEFAULT_KIND) is static.KIND


@pytest.mark.parametrize("kind", KINDS.values(), ids=list(KINDS))
def test_every_kind_has_the_runtime_contract(kind):
    assert callable(kind.validate_config) and callable(kind.compile)
    assert inspect.iscoroutinefunction(kind.call)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_contract_runs_what_the_kind_package_runs(name):
    """The contract delegates to the package's own functions: one behaviour, two doors."""
    package, kind = PACKAGES[name], KINDS[name]
    assert kind.validate_config({"nonsense": 1}) == package.validate_config({"nonsense": 1})


def test_loading_the_kinds_registers_the_workflow_http_step():
    assert "http" in workflow.STEP_TYPES
