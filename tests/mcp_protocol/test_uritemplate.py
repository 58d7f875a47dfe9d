import pytest

from mcp_protocol.uritemplate import UriTemplateError, expand, match, variables


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("test://template/{id}/data", {"id": "123"}, "test://template/123/data"),
        ("x/{var}", {"var": "a b/c"}, "x/a%20b%2Fc"),
        ("x/{+path}", {"path": "a/b c"}, "x/a/b%20c"),
        ("x{#frag}", {"frag": "top/one"}, "x#top/one"),
        ("x{/a,b}", {"a": "p", "b": "q"}, "x/p/q"),
        ("x{.ext}", {"ext": "json"}, "x.json"),
        ("x{?q,lang}", {"q": "cat dog", "lang": "en"}, "x?q=cat%20dog&lang=en"),
        ("x?fixed=1{&page}", {"page": 2}, "x?fixed=1&page=2"),
        ("x{;id}", {"id": 7}, "x;id=7"),
        ("x{?q,lang}", {"lang": "en"}, "x?lang=en"),
        ("x{/list*}", {"list": ["a", "b"]}, "x/a/b"),
        ("x/{name:3}", {"name": "abcdef"}, "x/abc"),
    ],
)
def test_it_expands_rfc_6570_expressions(template, values, expected):
    assert expand(template, values) == expected


def test_it_leaves_out_undefined_variables_and_their_prefix():
    assert expand("x{?a,b}{#f}{/p}", {}) == "x"


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("x/{var}", "x/a%20b", {"var": "a b"}),
        ("file://{+path}", "file:///etc/hosts", {"path": "/etc/hosts"}),
        ("x{#frag}", "x#top/one", {"frag": "top/one"}),
        ("x{/a,b}", "x/p/q", {"a": "p", "b": "q"}),
        ("name{.ext}", "name.json", {"ext": "json"}),
        ("x{?q,lang}", "x?lang=en&q=cat%20dog", {"q": "cat dog", "lang": "en"}),
        ("x{?q,lang}", "x", {}),
        ("x?fixed=1{&page}", "x?fixed=1&page=2", {"page": "2"}),
        ("{a,b}", "1,2", {"a": "1", "b": "2"}),
    ],
)
def test_it_matches_uris_back_into_variables(template, uri, expected):
    assert match(template, uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/123/other"),
        ("test://template/{id}/data", "test://template/1/2/data"),
        ("test://static-text", "test://static-text2"),
        ("other://{x}", "test://x"),
    ],
)
def test_it_does_not_match_other_uris(template, uri):
    assert match(template, uri) is None


def test_literal_regex_characters_in_a_template_are_taken_literally():
    assert match("a.b/{x}", "aXb/1") is None
    assert match("a.b/{x}", "a.b/1") == {"x": "1"}


def test_it_lists_the_variables_in_order_without_repeats():
    assert variables("x/{a}{?b,c}{&a}") == ["a", "b", "c"]


@pytest.mark.parametrize("template", ["x/{a", "x/}a{", "x/{a b}", "x/{}"])
def test_it_rejects_malformed_templates(template):
    with pytest.raises(UriTemplateError):
        variables(template)


def test_a_match_round_trips_an_expansion():
    template = "db://{schema}/tables{/table}{?limit,offset}"
    values = {"schema": "public", "table": "users", "limit": "10", "offset": "20"}
    assert match(template, expand(template, values)) == values
