import functools

from servers import shapes
from servers.templating import compile_value


def test_values_of_one_shape_share_one_function_and_keep_their_own_leaves():
    first = compile_value({"content": [{"type": "text", "text": "{{ text }}"}]})
    second = compile_value({"answer": [{"kind": "note", "body": "Hello {{ name }}"}]})
    assert isinstance(first, functools.partial) and isinstance(second, functools.partial)
    assert first.func is second.func
    assert first({"text": "hi"}) == {"content": [{"type": "text", "text": "hi"}]}
    assert second({"name": "Ada"}) == {"answer": [{"kind": "note", "body": "Hello Ada"}]}


def test_a_tenants_keys_and_texts_are_data_never_source():
    hostile = '}), __import__("os").system("false"), ({'
    value = {hostile: [hostile, "{{ x }}", 1, None, True], "a0": "v", "v": "a0"}
    rendered = compile_value(value)({"x": 2})
    assert rendered == {hostile: [hostile, 2, 1, None, True], "a0": "v", "v": "a0"}


def test_every_call_gets_fresh_containers_and_shared_scalars():
    render = compile_value({"list": [], "map": {}, "nested": [{"n": 1.5}]})
    one, two = render({}), render({})
    assert one == two == {"list": [], "map": {}, "nested": [{"n": 1.5}]}
    one["list"].append(1)
    one["nested"][0]["n"] = 0
    assert two == {"list": [], "map": {}, "nested": [{"n": 1.5}]}
    assert render({}) == {"list": [], "map": {}, "nested": [{"n": 1.5}]}


def test_a_value_past_the_limits_renders_the_same_through_a_tree_of_closures():
    deep: object = "{{ x }}"
    for _ in range(shapes.MAX_DEPTH + 5):
        deep = [deep]
    wide = {f"k{index}": "{{ x }}" for index in range(shapes.MAX_LEAVES + 10)}
    for value in (deep, wide):
        render = compile_value(value)
        assert not isinstance(render, functools.partial)
        rendered = render({"x": 7})
        # The same structure, each template leaf rendered to the native 7.
        assert _replace(value, "{{ x }}", 7) == rendered


def test_tuples_render_as_lists_as_before():
    assert compile_value(("a", ("{{ x }}",)))({"x": "b"}) == ["a", ["b"]]


def _replace(value, old, new):
    if isinstance(value, dict):
        return {key: _replace(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, old, new) for item in value]
    return new if value == old else value
