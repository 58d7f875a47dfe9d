"""Templates a tenant writes cannot hold the shared process or grow its memory: each breach is
a tool error for that call, and another tenant's ping stays fast meanwhile."""

import pytest

from .conftest import static_tool, tool_text, under_attack

ATTACKS = {
    "nested_loops": (
        "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
        ("loop iterations", "longer than 40 ms"),  # whichever bound comes first
    ),
    "huge_power": ("{{ 2 ** 100000 }}", "number over 4096 bits"),
    "string_doubling": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
        "larger than",
    ),
    "padding": ("{{ '{:>999999999}'.format(1) }}", "larger than"),
    "exponential_macro": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(40) }}",
        "longer than 40 ms",
    ),
    "endless_recursion": (
        "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
        "recursed too deeply",
    ),
    "sum_in_a_loop": (
        "{% for i in range(100000) %}{{ range(100000) | sum }}{% endfor %}",
        "longer than 40 ms",
    ),
}


@pytest.mark.parametrize("name", ATTACKS)
def test_a_costly_template_is_a_tool_error_while_other_tenants_stay_fast(name, attacker, victim):
    template, expected = ATTACKS[name]
    tenant = attacker(tools=[static_tool("attack", template)])

    def attack():
        return tenant.client.request("tools/call", {"name": "attack", "arguments": {}})

    measured = under_attack(attack, victim, f"template {name}")
    response, messages = measured.answer
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(("application/json", "text/event-stream"))
    reply = messages[-1]
    assert reply["result"]["isError"] is True
    expected = (expected,) if isinstance(expected, str) else expected
    assert any(text in tool_text(reply) for text in expected), tool_text(reply)


def test_a_large_integer_result_is_a_tool_error_not_an_html_500(attacker):
    tenant = attacker(tools=[static_tool("big", "{{ 2 ** 100 }}")])
    reply = tenant.client.call("tools/call", {"name": "big", "arguments": {}})
    assert reply["result"]["isError"] is True
    assert "too large for a JSON number" in tool_text(reply)


def test_an_ordinary_template_still_renders(attacker):
    tenant = attacker(
        tools=[
            static_tool(
                "fine",
                "{% for i in range(3) %}{{ i }}{% endfor %} {{ 2 ** 10 }} {{ 'ab' * 2 }}",
            )
        ]
    )
    reply = tenant.client.call("tools/call", {"name": "fine", "arguments": {}})
    assert tool_text(reply) == "012 1024 abab"
