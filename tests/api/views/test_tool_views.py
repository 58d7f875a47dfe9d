"""A tool's view through the REST API: written, read back and checked like the format's other
fields (a form's tool must be one of the server's)."""

import pytest

from servers.models import Tool

VIEW = {
    "template": "chart",
    "title": "Sales",
    "data": "months",
    "chart": {"type": "bar", "x": "month", "y": ["sales"]},
    "csp": {"resourceDomains": ["https://cdn.example.com"]},
    "prefersBorder": False,
}


@pytest.mark.django_db
def test_the_api_writes_and_reads_a_tools_view_and_checks_it(api, server):
    response = api.post(
        "/api/servers/weather/tools/",
        {
            "name": "sales",
            "description": "Monthly sales.",
            "inputSchema": {"type": "object"},
            "config": {"content": [{"type": "text", "text": "s"}]},
            "view": VIEW,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    pk = response.json()["id"]
    assert api.get(f"/api/servers/weather/tools/{pk}/").json()["view"] == VIEW

    form = {"template": "form", "tool": "echo"}  # echo: the server's other tool
    patched = api.patch(f"/api/servers/weather/tools/{pk}/", {"view": form}, format="json")
    assert patched.status_code == 200, patched.json()
    assert Tool.objects.get(pk=pk).view == form

    bad = api.patch(
        f"/api/servers/weather/tools/{pk}/",
        {"view": {"template": "form", "tool": "nowhere"}},
        format="json",
    )
    assert bad.status_code == 400
    assert "no tool 'nowhere' in this server" in str(bad.json())
