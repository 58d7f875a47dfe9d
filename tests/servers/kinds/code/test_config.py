"""What a code tool's config must look like, and the inline errors a save shows."""

import pytest

from servers.kinds import code, get_kind


def errors(**config):
    return code.validate_config({"language": "python", **config})


def test_the_code_kind_is_registered_beside_the_others():
    assert get_kind("code") is code


def test_a_module_defining_main_is_accepted_in_both_shapes():
    assert errors(source="def main(args):\n    return 1\n") == []
    assert errors(source="async def main(args, ctx):\n    return 1\n") == []


def test_a_syntax_error_names_its_line_and_column():
    assert errors(source="def main(args):\n    return (1\n") == [
        "config.source: line 2, column 12: '(' was never closed"
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", "config.source: is required: a Python module defining main"),
        ("x = 1\n", "config.source: defines no top-level main"),
        ("def main():\n    pass\n", "config.source: line 1: main must take (args) or (args, ctx)"),
        ("def main(a, b, c):\n    pass\n", "config.source: line 1: main must take (args)"),
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
