"""Which names a template reads from outside, found by jinja's own analysis."""

from servers.template_names import read_names, unknown_name_problems


def test_a_typo_is_a_name_the_template_reads():
    assert read_names("hi {{ nmae }}!") == {"nmae"}


def test_names_a_template_sets_itself_are_not_read_from_outside():
    text = "{% set greeting = 'hi' %}{% for x in items %}{{ loop.index }}{{ x.y }}{% endfor %}{{ greeting }}"
    assert read_names(text) == {"items"}


def test_jinja_globals_are_always_known():
    assert read_names("{{ range(3) | list }}{{ dict(a=1) }}{{ namespace(n=1).n }}") == set()


def test_a_template_that_does_not_parse_reports_no_names():
    assert read_names("{{ oops") == frozenset()


def test_an_unknown_name_is_reported_with_its_path_and_the_closest_known_name():
    config = {"content": [{"type": "text", "text": "hi {{ nmae }}!"}]}
    assert unknown_name_problems(config, "config", {"name"}) == [
        "config.content[0].text: the template reads 'nmae', which is not one of its arguments "
        "(name); did you mean 'name'?"
    ]


def test_a_workflow_step_key_is_known():
    assert unknown_name_problems("{{ step0.action }}", "x", set()) == []
