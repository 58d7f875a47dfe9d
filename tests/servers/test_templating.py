import pytest

from mcp_protocol.errors import ToolError
from servers.templating import TemplateCompileError, compile_value, is_template


def test_it_renders_every_string_inside_dicts_and_lists():
    render = compile_value(
        {"a": "Hello {{ who }}", "b": ["{% if loud %}HI{% endif %}", {"c": "{{ who|upper }}"}]}
    )
    assert render({"who": "ann", "loud": True}) == {"a": "Hello ann", "b": ["HI", {"c": "ANN"}]}


def test_plain_strings_and_other_values_come_back_as_they_are():
    value = {"text": "no template here", "n": 3, "ok": True, "none": None, "list": [1.5]}
    assert compile_value(value)({"anything": 1}) == value


def test_a_lone_expression_keeps_its_native_type():
    render = compile_value(
        {
            "sum": "{{ a + b }}",
            "flag": "{{ a > b }}",
            "items": "{{ [a, b] }}",
            "m": "{{ {'k': a} }}",
        }
    )
    assert render({"a": 2, "b": 1}) == {"sum": 3, "flag": True, "items": [2, 1], "m": {"k": 2}}


def test_an_expression_with_text_around_it_renders_as_a_string():
    assert compile_value("n={{ a }}")({"a": 2}) == "n=2"
    assert compile_value("{{ a }} and {{ b }}")({"a": 1, "b": 2}) == "1 and 2"


def test_a_native_result_is_plain_json_data():
    render = compile_value("{{ [missing, (1, 2), range(2), {'k': 'v' | tojson}] }}")
    assert render({}) == ["", [1, 2], [0, 1], {"k": '"v"'}]


def test_undefined_variables_render_as_empty_strings():
    assert compile_value("[{{ missing }}]")({}) == "[]"
    assert compile_value("{{ missing }}")({}) == ""
    assert compile_value("{{ missing.deeper }}")({}) == ""


def test_tojson_gives_json_text():
    assert compile_value("{{ x | tojson }}")({"x": {"a": [1, "b"]}}) == '{"a": [1, "b"]}'


def test_b64_filters_round_trip():
    assert compile_value("{{ 'hi there' | b64encode }}")({}) == "aGkgdGhlcmU="
    assert compile_value("{{ s | b64decode }}")({"s": "aGkgdGhlcmU="}) == "hi there"


def test_a_syntax_error_is_raised_at_compile_time_with_the_template_text():
    with pytest.raises(TemplateCompileError) as raised:
        compile_value({"deep": ["Hello {{ who "]})
    assert "Hello {{ who " in str(raised.value)


def test_a_runtime_error_is_a_tool_error_naming_the_template():
    render = compile_value("{{ 1 / n }}")
    with pytest.raises(ToolError) as raised:
        render({"n": 0})
    assert "{{ 1 / n }}" in raised.value.message


def test_bad_base64_is_a_tool_error():
    with pytest.raises(ToolError):
        compile_value("{{ 'not base64!' | b64decode }}")({})


def test_the_sandbox_hides_unsafe_attributes_and_refuses_calls_on_them():
    assert compile_value("[{{ x.__class__.__mro__ }}]")({"x": "s"}) == "[]"
    with pytest.raises(ToolError):
        compile_value("{{ x.__class__.__subclasses__() }}")({"x": "s"})


def test_compiled_templates_are_cached():
    assert compile_value("{{ a }}!") is not None
    from servers.templating import _compile_string

    assert _compile_string("cache {{ me }}") is _compile_string("cache {{ me }}")


def test_it_recognises_templates():
    assert is_template("{{ a }}") and is_template("{% if x %}{% endif %}")
    assert not is_template("{ not one }")


def test_rendering_one_call_does_not_change_what_the_next_call_sees():
    render = compile_value({"list": ["{{ a }}"]})
    first = render({"a": 1})
    first["list"].append("mutated")
    assert render({"a": 2}) == {"list": [2]}


def jinja_only(text):
    """The renderer of `text` without the bare-name shortcut, for comparison."""
    from servers import templating

    templating._compile_string.cache_clear()
    original = templating._bare_name
    templating._bare_name = lambda text, expression: None
    try:
        return templating._compile_string(text)
    finally:
        templating._bare_name = original
        templating._compile_string.cache_clear()


def test_a_template_of_one_name_renders_exactly_as_jinja_renders_it():
    from servers.templating import _compile_string

    variables = [
        {"text": "hello"},
        {"text": ""},
        {"text": "{{ not rendered again }}"},
        {"text": 3},
        {"text": 1.5},
        {"text": None},
        {"text": True},
        {"text": ["a", {"b": 1}]},
        {"text": {"k": "v"}},
        {},
        {"other": "x"},
        {"text": "hi", "range": "shadowed"},
        {"range": "shadowed"},
    ]
    for text in ("{{ text }}", "{{text}}", "{{ range }}", "{{ none }}", "{{ true }}"):
        fast, slow = _compile_string(text), jinja_only(text)
        for each in variables:
            got, expected = fast(dict(each)), slow(dict(each))
            assert got == expected and type(got) is type(expected), (text, each)


def test_an_argument_named_self_fails_the_same_way_with_or_without_the_shortcut():
    from servers.templating import _compile_string

    for render in (_compile_string("{{ text }}"), jinja_only("{{ text }}")):
        with pytest.raises(ToolError, match="failed"):
            render({"text": "hi", "self": "me"})


def test_only_a_plain_variable_is_a_bare_name():
    from servers.templating import ENV, _bare_name

    def bare(text):
        expression = ENV.compile_expression(text[2:-2], undefined_to_none=False)
        return _bare_name(text, expression)

    assert bare("{{ text }}") == "text"
    assert bare("{{ self }}") is None
    assert bare("{{ none }}") is None
    assert bare("{{ text|upper }}") is None
    assert bare("{{ a.b }}") is None
