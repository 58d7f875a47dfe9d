"""The dashboard's halves of views: the generator the tool editor posts to, the sandbox proxy page
of the playground's preview (its policy is the view's), and the tool form saving a view."""

import json

import pytest

from servers.models import Tool

pytestmark = pytest.mark.django_db


def generate(client, slug, **body):
    return client.post(
        f"/servers/{slug}/tools/view/generate/", json.dumps(body), content_type="application/json"
    )


def test_the_generator_answers_a_view_fitted_to_the_sample(member_client, server):
    sample = json.dumps({"structuredContent": {"rows": [{"day": "mon", "n": 3}]}})
    response = generate(member_client, server.slug, template="chart-bar", sample=sample)
    assert response.status_code == 200
    assert response.json()["view"] == {
        "template": "chart",
        "data": "rows",
        "chart": {"type": "bar", "x": "day", "y": ["n"]},
    }


def test_the_generator_says_which_input_is_not_json(member_client, server):
    response = generate(member_client, server.slug, template="table", outputSchema="{nope")
    assert response.status_code == 400
    assert response.json()["error"].startswith("The output schema is not valid JSON")
    assert generate(member_client, server.slug, template="gallery").status_code == 400


def test_the_generator_of_another_organizations_server_is_not_found(member_client, outsider_server):
    assert generate(member_client, outsider_server.slug, template="table").status_code == 404


def test_the_sandbox_page_carries_the_views_policy_and_may_be_framed_by_this_site_only(client):
    csp = {"connectDomains": ["https://api.example.com", "https://x.com; script-src *"]}
    response = client.get("/views/sandbox/", {"csp": json.dumps(csp)})
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "connect-src https://api.example.com;" in policy
    assert "x.com" not in policy and "frame-ancestors 'self'" in policy
    assert response["X-Frame-Options"] == "SAMEORIGIN"
    assert b"ui/notifications/sandbox-" in response.content and b"proxy-ready" in response.content
    assert client.get("/views/sandbox/", {"csp": "{bad"}).status_code == 400


def test_the_tool_form_saves_a_view_with_its_custom_html_apart(member_client, server, tool):
    page = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/")
    assert b'id="tool-view"' in page.content
    form = {
        "name": "echo",
        "description": "Echo a message back.",
        "kind": "static",
        "input_schema": json.dumps(tool.input_schema),
        "config": json.dumps(tool.config),
        "enabled": "on",
        "task_support": "forbidden",
        "view": "template: html\ncsp:\n  connectDomains: [https://api.example.com]\n",
        "view_html": "<!doctype html><p>mine</p>",
    }
    response = member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Tool.objects.get(pk=tool.pk).view == {
        "template": "html",
        "csp": {"connectDomains": ["https://api.example.com"]},
        "html": "<!doctype html><p>mine</p>",
    }
    form["view"] = "template: form\ntool: nowhere\n"
    refused = member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/", form)
    assert refused.status_code == 400
    assert "no tool &#x27;nowhere&#x27; in this server" in refused.content.decode()
