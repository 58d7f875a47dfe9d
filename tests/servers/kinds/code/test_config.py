"""What a code tool's config must look like, and the inline errors a save shows."""

import pytest

from servers.kinds import code, get_kind
from servers.kinds.code.kind import KIND as CODE


def errors(**config):
    return code.validate_config({"language": "python", **config})


def test_the_code_kind_is_registered_beside_the_others():
    assert get_kind("code") is CODE and CODE.validate_config is not None


def test_a_module_defining_main_is_accepted_in_both_shapes():
    assert errors(source="def main(args):\n    return 1\n") == []
    assert errors(source="async def main(args, ctx):\n    return 1\n") == []


def test_a_syntax_error_found_on_save_names_its_line_and_column():
    config = {"source": "def main(args):\n    x = 1\n  y = 2\n"}
    assert errors(**config) == []  # every compile runs only the cheap checks
    assert code.validate_on_save(config) == [
        "config.source: line 3, column 1: unindent does not match any outer indentation level"
    ]
    assert code.validate_on_save({"source": "def main(args):\n    return (1\n"}) == [
        "config.source: line 2, column 1: unexpected EOF while parsing"
    ]


def test_python_that_monty_does_not_support_is_refused_on_save():
    config = {"source": "def gen():\n    yield 1\n\ndef main(args):\n    return list(gen())\n"}
    (problem,) = code.validate_on_save(config)
    assert "does not yet support yield" in problem


def test_the_save_check_parses_but_runs_nothing():
    config = {
        "source": "fetch('http://example.com')\nwhile True:\n    pass\ndef main(a):\n    pass\n"
    }
    assert code.validate_on_save(config) == []


def test_validate_definition_runs_the_save_check():
    from servers.definition import validate_definition

    tool = {
        "name": "t",
        "description": "d",
        "inputSchema": {"type": "object"},
        "kind": "code",
        "config": {"source": "def main(args):\n    return (1\n"},
    }
    assert validate_definition({"slug": "s1", "name": "s", "tools": [tool]}) == [
        "tools[0].config.source: line 2, column 1: unexpected EOF while parsing"
    ]


# A source CPython's own parser needs about a second for: the host never parses it.
PATHOLOGICAL = ("x = " + "[" * 90 + "]" * 90 + "\n") * 300 + "def main(args):\n    return 1\n"


def test_a_pathological_source_costs_this_process_next_to_nothing():
    import time

    started = time.perf_counter()
    for _ in range(5):
        assert errors(source=PATHOLOGICAL) == []
        code.compile({"config": {"source": PATHOLOGICAL}})
    # Five compiles and checks; CPython's parser would need seconds for one.
    assert time.perf_counter() - started < 0.5
    # Monty parses it in a worker subprocess (and finds nothing wrong).
    assert code.validate_on_save({"source": PATHOLOGICAL}) == []


@pytest.mark.parametrize(
    ("signature", "is_async", "takes_ctx"),
    [
        ("def main(args)", False, False),
        ("async def main(args, ctx)", True, True),
        ("def main(args, ctx=None)", False, True),
        ("def main(args, *rest)", False, True),
        ("def main(\n    args: dict,\n    ctx,\n)", False, True),
        ("async def main(a, b=(1, 2), **kw)", True, True),
    ],
)
def test_the_entry_is_read_from_mains_signature(signature, is_async, takes_ctx):
    compiled = code.compile({"config": {"source": f"{signature}:\n    return 1\n"}})
    assert (compiled.entry.is_async, compiled.entry.takes_ctx) == (is_async, takes_ctx)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", "config.source: is required: a Python module defining main"),
        ("x = 1\n", "config.source: defines no top-level main"),
        ("def main():\n    pass\n", "config.source: line 1: main must take (args) or (args, ctx)"),
        ("def main(a, b, c):\n    pass\n", "config.source: line 1: main must take (args)"),
        ("def main(*, args):\n    pass\n", "config.source: line 1: main must take (args)"),
        ("def main(args:\n", "config.source: line 1: the parameters of main do not close"),
    ],
)
def test_a_source_without_a_usable_main_is_refused(source, expected):
    (problem,) = errors(source=source)
    assert problem.startswith(expected)


def test_an_oversized_source_is_refused():
    source = "def main(args):\n    return 1\n" + "# padding\n" * 8000
    assert errors(source=source) == ["config.source: is longer than 64 KB"]


def test_only_known_languages_limits_and_fields_pass():
    assert code.validate_config({"language": "ruby", "source": "x"}) == [
        "config.language: must be one of python"
    ]
    assert errors(source="def main(a):\n  pass", extra=1) == ["config.extra: unknown field"]
    assert errors(source="def main(a):\n  pass", limits={"cpuSeconds": 0}) == [
        "config.limits.cpuSeconds: must be a number above 0"
    ]
    assert errors(source="def main(a):\n  pass", limits={"bogus": 1}) == [
        "config.limits.bogus: unknown limit (known: wallSeconds, cpuSeconds, memoryMb, "
        "outputBytes, hostCalls, recursionDepth)"
    ]


def test_limits_above_the_platform_maximums_are_refused_and_defaults_are_capped(settings):
    settings.CODE_MAX_CPU_SECONDS = 2
    assert errors(source="def main(a):\n  pass", limits={"cpuSeconds": 3}) == [
        "config.limits.cpuSeconds: at most 2 on this platform"
    ]
    compiled = code.compile({"config": {"source": "def main(a):\n  pass"}})
    assert compiled.limits.cpu_seconds == 2  # the default (5) is above the maximum


def test_only_secrets_named_literally_in_the_source_are_read():
    compiled = code.compile(
        {
            "config": {
                "source": "def main(args):\n    return secrets['A'] + secrets.get(\"B\")\n",
            }
        }
    )
    assert compiled.secret_names == {"A", "B"}
