"""Resource templates match URIs in linear time, and templates that could split a URI more
than one way are refused when saved."""

import pytest

from servers.changes import bump_server
from servers.definition import DefinitionError, import_definition
from servers.models import ResourceTemplate

from .conftest import under_attack


def template(uri_template: str) -> dict:
    return {"uriTemplate": uri_template, "name": "t", "mimeType": "text/plain", "text": "hit"}


@pytest.mark.parametrize(
    "uri_template", ["x://{+a}{+b}{+c}{+d}/end", "x://{a}{b}", "x://{+a,b}", "x://{a}{.b}"]
)
def test_an_ambiguous_template_is_refused_with_a_clear_error(org, uri_template):
    definition = {"slug": "ambiguous", "name": "a", "resourceTemplates": [template(uri_template)]}
    with pytest.raises(DefinitionError) as raised:
        import_definition(definition, org)
    message = str(raised.value)
    assert "resourceTemplates[0].uriTemplate: is refused" in message
    assert "more than one way" in message


def test_unambiguous_templates_are_accepted_and_match(attacker):
    tenant = attacker(
        resourceTemplates=[template("x://items/{id}{?q}"), template("file:///{+path}")]
    )
    read = tenant.client.call("resources/read", {"uri": "file:///a/b/c.txt"})
    assert read["result"]["contents"][0]["text"] == "hit"


@pytest.mark.parametrize("slashes", [False, True])
def test_a_long_uri_against_a_stored_ambiguous_template_answers_at_once(
    committed, attacker, victim, slashes
):
    """A template saved before the check existed still matches in linear time (RE2)."""
    tenant = attacker(resourceTemplates=[template("x://{+a}/{+b}/{+c}/{+d}/end")])

    def make_ambiguous():
        ResourceTemplate.objects.filter(server=tenant.server).update(
            uri_template="x://{+a}{+b}{+c}{+d}/end"
        )
        bump_server(tenant.slug)

    committed(make_ambiguous)
    uri = "x://" + ("a/" if slashes else "a") * 50_000 + "/nope"

    def attack():
        return tenant.client.call("resources/read", {"uri": uri})

    reply = under_attack(attack, victim, f"uri template ({'slashes' if slashes else 'plain'})")
    assert reply.answer["error"]["code"] in (-32002, -32602)
