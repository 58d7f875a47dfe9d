import json

import pytest

from servers.models import Tool


@pytest.fixture
def workflow_tool(server):
    return Tool.objects.create(
        server=server,
        name="steps",
        description="Logs and returns",
        input_schema={"type": "object", "properties": {"who": {"type": "string"}}},
        kind="workflow",
        enabled=False,
        config={
            "steps": [
                {"log": {"level": "info", "message": "hello {{ who }}"}},
                {"return": {"content": [{"type": "text", "text": "done for {{ who }}"}]}},
            ]
        },
    )


def post(client, server, tool, body):
    return client.post(
        f"/servers/{server.slug}/tools/{tool.pk}/test/",
        json.dumps(body) if not isinstance(body, str) else body,
        content_type="application/json",
    )


def test_the_test_page_renders_the_schema_for_the_form(member_client, server, tool):
    page = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/test/").content.decode()
    assert 'id="tool-schema"' in page and "message" in page


def test_a_long_description_scrolls_in_place_on_the_test_page(member_client, server, tool):
    tool.description = "Explains a lot. " * 2000
    tool.save()
    page = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/test/").content.decode()
    assert '<p class="muted prewrap clamp-tall">Explains a lot.' in page


def test_a_disabled_tool_runs_and_reports_result_logs_and_timing(
    member_client, server, workflow_tool
):
    report = post(member_client, server, workflow_tool, {"arguments": {"who": "Ada"}}).json()
    assert report["result"]["content"][0]["text"] == "done for Ada"
    assert "hello Ada" in json.dumps(report["logs"])
    assert report["timing"]["totalMs"] >= 0


def test_bad_arguments_are_a_clear_error(member_client, server, tool):
    response = post(member_client, server, tool, "not json")
    assert response.status_code == 400
    response = post(member_client, server, tool, {"arguments": [1]})
    assert response.status_code == 400
    report = post(member_client, server, tool, {"arguments": {"message": 5}}).json()
    assert "error" in report or report["result"].get("isError")


def test_an_outsider_cannot_test_my_tools(client, outsider, server, tool):
    client.force_login(outsider)
    assert post(client, server, tool, {"arguments": {}}).status_code == 404
