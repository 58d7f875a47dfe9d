import inspect

import pytest

from servers.kinds import KINDS, code, get_kind, http, static, upstream, workflow


def test_the_registry_names_every_kind():
    assert {
        "static": static,
        "workflow": workflow,
        "http": http,
        "upstream": upstream,
        "code": code,
    } == KINDS
    assert get_kind("workflow") is workflow


def test_an_unknown_kind_is_a_clear_value_error():
    with pytest.raises(ValueError, match="Unknown tool kind 'nope'"):
        get_kind("nope")


@pytest.mark.parametrize("module", [static, workflow, http, upstream, code])
def test_every_kind_has_the_runtime_contract(module):
    assert callable(module.validate_config) and callable(module.compile)
    assert inspect.iscoroutinefunction(module.call)


def test_loading_the_kinds_registers_the_workflow_http_step():
    assert "http" in workflow.STEP_TYPES
