"""The tool editor and the test page with kind: code (the Python source field, its syntax check on
save, the test run's host calls and printed output)."""

import json

import pytest

from servers.models import Tool

SOURCE = "async def main(args, ctx):\n    log('info', 'hi ' + args['who'])\n    print('side note')\n    return {'hello': args['who']}\n"


def code_post(**overrides):
    data = {
        "name": "hello",
        "title": "",
        "description": "Says hello.",
        "kind": "code",
        "input_schema": json.dumps(
            {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
        ),
        "output_schema": "",
        "config": json.dumps({"language": "python"}),
        "source": SOURCE,
        "enabled": "on",
    }
    data.update(overrides)
    return data


def test_the_editor_marks_the_source_field_for_the_python_code_editor(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/tools/new/").content.decode()
    assert 'data-code-editor="python"' in page
    assert 'data-kind-only="code"' in page
    assert "async def main(args, ctx)" in page  # the signature hint


def test_a_code_tool_is_saved_with_its_source_inside_the_config(member_client, server):
    response = member_client.post(f"/servers/{server.slug}/tools/new/", code_post())
    assert response.status_code == 302, response.context["form"].errors
    tool = Tool.objects.get(server=server, name="hello")
    assert tool.kind == "code"
    assert tool.config == {"language": "python", "source": SOURCE}


def test_editing_shows_the_source_in_its_own_field_and_not_in_the_config(member_client, server):
    tool = Tool.objects.create(
        server=server,
        name="hello",
        kind="code",
        input_schema={"type": "object"},
        config={"language": "python", "source": SOURCE, "limits": {"cpuSeconds": 2}},
    )
    form = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/").context["form"]
    assert form.initial["source"] == SOURCE
    assert form.initial["config"] == {"language": "python", "limits": {"cpuSeconds": 2}}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def main(args):\n    return (1\n", "line 2, column 1: unexpected EOF while parsing"),
        ("def helper():\n    pass\n", "defines no top-level main"),
    ],
)
def test_a_syntax_error_is_shown_next_to_the_source_and_nothing_is_saved(
    member_client, server, source, expected
):
    response = member_client.post(f"/servers/{server.slug}/tools/new/", code_post(source=source))
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert expected in errors["source"][0]
    assert "config" not in errors
    assert not server.tools.exists()


def test_limits_beyond_the_platform_are_reported_on_the_config(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        code_post(config=json.dumps({"limits": {"memoryMb": 100000}})),
    )
    assert response.status_code == 400
    assert "limits.memoryMb: at most" in str(response.context["form"].errors["config"])


def test_the_test_run_shows_result_logs_printed_output_and_host_calls(member_client, server):
    tool = Tool.objects.create(
        server=server,
        name="hello",
        kind="code",
        input_schema={"type": "object"},
        config={"language": "python", "source": SOURCE},
    )
    page = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/test/").content.decode()
    assert 'id="tr-host-card"' in page
    report = member_client.post(
        f"/servers/{server.slug}/tools/{tool.pk}/test/",
        json.dumps({"arguments": {"who": "Ada"}}),
        content_type="application/json",
    ).json()
    assert report["result"]["structuredContent"] == {"hello": "Ada"}
    assert report["logs"] == [{"level": "info", "data": "hi Ada", "logger": "code"}]
    assert report["printed"] == [{"stream": "stdout", "text": "side note\n"}]
    assert [call["function"] for call in report["hostCalls"]] == ["log"]
    assert report["timing"]["totalMs"] > 0
