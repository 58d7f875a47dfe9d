"""The limits of one render, in-process (the live-server attacks are in tests/servers/adversarial)."""

import time

import pytest

from mcp_protocol.errors import ToolError
from servers.template_limits import TemplateLimitError
from servers.templating import compile_value


def render(template: str, **variables):
    return compile_value(template)(variables)


@pytest.mark.parametrize(
    "template",
    [
        "{{ 'x' * 100000000 }}",
        "{{ [1, 2] * 100000000 }}",
        "{{ 'x'.ljust(1000000000) }}",
        "{{ 'x'.zfill(1000000000) }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{{ '{:>{}}'.format(1, 999999999) }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '%999999999d' | format(1) }}",
        "{{ 'x' | center(1000000000) }}",
        "{{ 'x' | indent(1000000000, true) }}",
        "{{ [1] | slice(1000000000) | list }}",
        "{{ ('ab' * 1000000).replace('a', 'a' * 30) }}",
        "{{ ('\\t' * 1000000).expandtabs(100) }}",
        "{{ 9 ** (9 ** 9) }}",
        "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}"
        "{% endfor %}{{ ns.n }}",
    ],
)
def test_a_template_that_would_build_too_much_is_refused_before_it_allocates(template):
    started = time.perf_counter()
    with pytest.raises(TemplateLimitError):
        render(template)
    assert time.perf_counter() - started < 1


def test_limits_are_tool_errors():
    assert issubclass(TemplateLimitError, ToolError)


def test_mutating_lists_and_dicts_is_not_allowed():
    with pytest.raises(ToolError, match="unsafe"):
        render("{% set l = [1] %}{{ l.append(2) }}")
    with pytest.raises(ToolError, match="unsafe"):
        render("{% set d = {} %}{{ d.update(a=1) }}")


def test_lipsum_is_gone():
    with pytest.raises(ToolError):
        render("{{ lipsum(100000) }}")


def test_a_loop_over_a_callers_list_counts_against_the_budget():
    items = list(range(1000))
    with pytest.raises(TemplateLimitError):
        render(
            "{% for a in items %}{% for b in items %}{{ '' }}{% endfor %}{% endfor %}",
            items=items,
        )


def test_the_output_is_bounded(monkeypatch):
    from servers import template_limits

    monkeypatch.setattr(template_limits, "MAX_OUTPUT_CHARS", 1000)
    with pytest.raises(TemplateLimitError, match="output"):
        render("{% for i in range(100) %}{{ body }}{% endfor %}", body="x" * 50)


def test_ordinary_templates_are_unaffected():
    assert render("{% for x in xs %}{{ loop.index }}:{{ x }} {% endfor %}", xs="ab") == "1:a 2:b "
    assert render("{{ n * 2 }}", n=21) == 42
    assert render("{{ 'a-b'.split('-') | join('+') }}") == "a+b"
    assert render("{{ '%s=%d' | format('n', 3) }}") == "n=3"
    assert render("{{ '{}!'.format(who) }}", who="hi") == "hi!"


@pytest.mark.parametrize(
    "template",
    [
        "{{ [body] * 100 }}",
        "x{{ [body] * 100 }}",
        "{{ ([body] * 100) | join }}",
        "{{ ([body] * 100) | string }}",
        "{{ ([body] * 100) | tojson }}",
        "{{ ''.join([body] * 100) }}",
        "{{ 'x' ~ ([body] * 100) }}",
        "{{ '%s' % ([body] * 100,) }}",
        "{{ '{}'.format([body] * 100) }}",
    ],
)
def test_a_short_list_repeating_a_large_string_is_not_turned_into_text(template):
    started = time.perf_counter()
    with pytest.raises(TemplateLimitError):
        render(template, body="y" * 1_000_000)
    assert time.perf_counter() - started < 1


def test_a_large_value_is_printed_but_not_rebuilt_past_the_string_limit():
    body = "y" * 5_000_000
    assert render("{{ body }}", body=body) == body
    with pytest.raises(TemplateLimitError):
        render("{{ body ~ '!' }}", body=body)
