"""Views travel with the definition: export and import, and published versions (the API: tests/api/views/test_tool_views.py)."""

import pytest

from servers import publishing
from servers.definition import export_definition, import_definition, normalize_definition
from servers.models import Tool

VIEW = {
    "template": "chart",
    "title": "Sales",
    "data": "months",
    "chart": {"type": "bar", "x": "month", "y": ["sales"]},
    "csp": {"resourceDomains": ["https://cdn.example.com"]},
    "prefersBorder": False,
}


def definition(slug):
    return {
        "slug": slug,
        "name": "sales",
        "tools": [
            {
                "name": "sales",
                "description": "Monthly sales.",
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "sales"}]},
                "view": VIEW,
            },
            {
                "name": "plain",
                "description": "No view.",
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "plain"}]},
            },
        ],
    }


@pytest.mark.django_db
def test_a_view_survives_export_and_import_unchanged(org):
    source = definition("views-roundtrip")
    server = import_definition(source, org)
    exported = export_definition(server)
    assert exported == normalize_definition(source)
    assert exported["tools"][0]["view"] == VIEW
    assert "view" not in exported["tools"][1]  # no view, nothing written

    server.delete()
    again = import_definition(exported, org)
    assert export_definition(again) == exported


@pytest.mark.django_db
def test_a_published_version_keeps_the_view_it_was_published_with(org, user):
    server = import_definition(definition("views-versions"), org)
    version = publishing.publish(server, user=user)
    Tool.objects.filter(server=server, name="sales").update(view={})
    served = publishing.served_definition(server, version.version)
    assert served["tools"][0]["view"] == VIEW
