import pytest

from servers.kinds import KINDS, get_kind, static, workflow


def test_the_registry_names_static_and_workflow():
    assert {"static": static, "workflow": workflow} == KINDS
    assert get_kind("workflow") is workflow


def test_an_unknown_kind_is_a_clear_value_error():
    with pytest.raises(ValueError, match="Unknown tool kind 'nope'"):
        get_kind("nope")


@pytest.mark.parametrize("module", [static, workflow])
def test_every_kind_has_the_runtime_contract(module):
    assert callable(module.validate_config) and callable(module.compile)
    import inspect

    assert inspect.iscoroutinefunction(module.call)
