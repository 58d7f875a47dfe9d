import json

from servers.models import Prompt, Resource, ResourceTemplate, Tool

SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}


def tool_post(**overrides):
    data = {
        "name": "echo",
        "title": "",
        "description": "Echo it back.",
        "kind": "static",
        "input_schema": json.dumps(SCHEMA),
        "output_schema": "",
        "config": json.dumps({"content": [{"type": "text", "text": "You said {{ message }}"}]}),
        "enabled": "on",
    }
    data.update(overrides)
    return data


def test_the_tool_editor_offers_every_kind(member_client, server):
    from servers import kinds

    response = member_client.get(f"/servers/{server.slug}/tools/new/")
    choices = [value for value, _ in response.context["form"].fields["kind"].choices]
    assert sorted(choices) == sorted(kinds.KINDS)


def test_a_static_tool_is_created(member_client, server):
    response = member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(read_only="on"))
    assert response.status_code == 302
    tool = Tool.objects.get(server=server, name="echo")
    assert tool.input_schema == SCHEMA
    assert tool.annotations == {"readOnlyHint": True}
    assert tool.enabled


def test_a_workflow_tool_is_created_from_yaml(member_client, server):
    config = """
steps:
  - elicit:
      message: "Sure?"
      requestedSchema: {type: object, properties: {ok: {type: boolean}}}
      into: answer
  - return: {content: [{type: text, text: "{{ answer.action }}"}]}
"""
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(name="ask", kind="workflow", config=config)
    )
    assert response.status_code == 302, response.context["form"].errors
    assert (
        Tool.objects.get(server=server, name="ask").config["steps"][0]["elicit"]["into"] == "answer"
    )


def test_a_broken_schema_is_reported_next_to_the_schema_field(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        tool_post(input_schema='{"type": "object", "properties": {"a": {"type": "strin"}}}'),
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert "input_schema" in errors
    assert not server.tools.exists()


def test_invalid_json_in_the_schema_names_the_line(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(input_schema='{"type": "object",\n}')
    )
    assert response.status_code == 400
    assert "line 2" in str(response.context["form"].errors["input_schema"])


def test_a_bad_config_is_reported_next_to_the_config_field(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        tool_post(config=json.dumps({"content": [{"type": "text"}]})),
    )
    assert response.status_code == 400
    assert "config" in response.context["form"].errors
    assert "text" in str(response.context["form"].errors["config"])


def test_a_bad_workflow_step_is_reported_and_nothing_is_saved(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        tool_post(kind="workflow", config=json.dumps({"steps": [{"teleport": {}}]})),
    )
    assert response.status_code == 400
    assert "config" in response.context["form"].errors


def test_a_tool_name_with_spaces_or_accents_gets_an_error_that_says_what_to_use(
    member_client, server
):
    for name in ("get weather", "météo"):
        response = member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(name=name))
        assert response.status_code == 400
        errors = response.context["form"].errors["name"]
        assert errors == [
            "Use only letters, digits and _ . / - (no spaces or accents), like get_weather."
        ]
    assert not Tool.objects.filter(server=server).exists()


def test_a_tool_name_of_every_allowed_character_is_accepted(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(name="Ns.v2/get_weather-now")
    )
    assert response.status_code == 302
    assert Tool.objects.filter(server=server, name="Ns.v2/get_weather-now").exists()


def test_a_duplicate_tool_name_is_refused_next_to_the_name(member_client, server, tool):
    response = member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(name="echo"))
    assert response.status_code == 400
    assert "name" in response.context["form"].errors


def test_editing_a_tool_keeps_its_other_annotations(member_client, server, tool):
    tool.annotations = {"title": "Echo", "readOnlyHint": True}
    tool.save()
    response = member_client.post(
        f"/servers/{server.slug}/tools/{tool.pk}/",
        tool_post(description="New words", idempotent="on"),
    )
    assert response.status_code == 302
    tool.refresh_from_db()
    assert tool.description == "New words"
    assert tool.annotations == {"title": "Echo", "idempotentHint": True}


def test_toggle_disables_and_enables(member_client, server, tool):
    member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/toggle/")
    tool.refresh_from_db()
    assert not tool.enabled
    member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/toggle/")
    tool.refresh_from_db()
    assert tool.enabled


def test_reorder_moves_a_tool_up(member_client, server):
    a = server.tools.create(name="a", description="a", input_schema={"type": "object"}, position=0)
    b = server.tools.create(name="b", description="b", input_schema={"type": "object"}, position=0)
    c = server.tools.create(name="c", description="c", input_schema={"type": "object"}, position=0)
    member_client.post(f"/servers/{server.slug}/tools/{c.pk}/move/", {"direction": "up"})
    assert list(server.tools.order_by("position", "id")) == [a, c, b]
    member_client.post(f"/servers/{server.slug}/tools/{a.pk}/move/", {"direction": "up"})
    assert list(server.tools.order_by("position", "id")) == [a, c, b]


def test_deleting_a_tool_asks_first(member_client, server, tool):
    assert member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/delete/").status_code == 200
    assert Tool.objects.filter(pk=tool.pk).exists()
    member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/delete/")
    assert not Tool.objects.filter(pk=tool.pk).exists()


def test_a_resource_is_created_and_base64_is_checked(member_client, server):
    base = {
        "uri": "docs://guide",
        "name": "guide",
        "title": "",
        "description": "",
        "mime_type": "text/markdown",
        "content": "# Guide",
    }
    assert member_client.post(f"/servers/{server.slug}/resources/new/", base).status_code == 302
    assert Resource.objects.get(uri="docs://guide").text == "# Guide"
    bad = {**base, "uri": "docs://bin", "content": "not base64!!", "is_base64": "on"}
    response = member_client.post(f"/servers/{server.slug}/resources/new/", bad)
    assert response.status_code == 400
    assert "content" in response.context["form"].errors


def test_a_resource_template_needs_a_variable(member_client, server):
    data = {"uri_template": "notes://all", "name": "notes", "text": "x", "completions": ""}
    response = member_client.post(f"/servers/{server.slug}/templates/new/", data)
    assert response.status_code == 400
    assert "uri_template" in response.context["form"].errors
    data["uri_template"] = "notes://{id}"
    data["completions"] = '{"id": ["1", "2"]}'
    assert member_client.post(f"/servers/{server.slug}/templates/new/", data).status_code == 302
    assert ResourceTemplate.objects.get(name="notes").completions == {"id": ["1", "2"]}


def test_a_prompt_is_created_with_arguments_and_messages(member_client, server):
    data = {
        "name": "greet",
        "description": "Greets someone",
        "arguments": '[{"name": "who", "required": true}]',
        "messages": '[{"role": "user", "content": {"type": "text", "text": "Hi {{ who }}"}}]',
        "completions": "",
    }
    assert member_client.post(f"/servers/{server.slug}/prompts/new/", data).status_code == 302
    prompt = Prompt.objects.get(server=server, name="greet")
    assert prompt.arguments == [{"name": "who", "required": True}]


def test_a_prompt_message_with_a_bad_role_is_reported_on_messages(member_client, server):
    data = {
        "name": "greet",
        "description": "d",
        "arguments": "[]",
        "messages": '[{"role": "robot", "content": {"type": "text", "text": "x"}}]',
    }
    response = member_client.post(f"/servers/{server.slug}/prompts/new/", data)
    assert response.status_code == 400
    assert "messages" in response.context["form"].errors


def test_an_unknown_part_type_is_404(member_client, server):
    assert member_client.get(f"/servers/{server.slug}/widgets/new/").status_code == 404


def test_yaml_dates_in_a_config_stay_the_text_that_was_typed(member_client, server):
    config = "content:\n  - type: text\n    text: 2024-01-01\n"
    response = member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(config=config))
    assert response.status_code == 302
    tool = server.tools.get(name=tool_post()["name"])
    assert tool.config["content"][0]["text"] == "2024-01-01"


def test_a_deeply_nested_schema_is_an_error_not_a_500(member_client, server):
    deep = '{"type": "object", "not": ' * 3000 + "{}" + "}" * 3000
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(input_schema=deep)
    )
    assert response.status_code == 400
    check = member_client.post("/schema/check/", deep, content_type="application/json")
    assert check.json()["valid"] is False


def test_a_new_tool_starts_as_a_static_tool_and_kinds_have_proper_labels(member_client, server):
    response = member_client.get(f"/servers/{server.slug}/tools/new/")
    form = response.context["form"]
    assert form["kind"].value() == "static"
    labels = dict(form.fields["kind"].choices)
    assert labels["http"] == "HTTP"
    assert list(labels)[0] == "static"
    assert '<option value="static" selected>Static</option>' in response.content.decode()


def test_the_tool_editor_saves_task_support_into_the_definition(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(task_support="required")
    )
    assert response.status_code == 302
    tool = Tool.objects.get(server=server, name="echo")
    assert tool.execution == {"taskSupport": "required"}
    edit = member_client.get(f"/servers/{server.slug}/tools/{tool.pk}/")
    assert edit.context["form"]["task_support"].value() == "required"
    member_client.post(
        f"/servers/{server.slug}/tools/{tool.pk}/", tool_post(task_support="forbidden")
    )
    tool.refresh_from_db()
    assert tool.execution == {}


def test_an_unknown_task_support_is_refused_next_to_its_field(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/", tool_post(task_support="sometimes")
    )
    assert response.status_code == 400
    assert "task_support" in response.context["form"].errors


def test_a_task_tool_made_in_the_editor_is_served_as_one(member_client, server):
    from servers.definition import export_definition
    from servers.snapshot import load_snapshot

    member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(task_support="optional"))
    assert export_definition(server)["tools"][0]["execution"] == {"taskSupport": "optional"}
    assert load_snapshot(server.slug).tools["echo"].task_support == "optional"


def test_json_and_yaml_fields_are_marked_for_the_editor(member_client, server):
    page = member_client.get(f"/servers/{server.slug}/tools/new/").content.decode()
    assert 'data-code-editor="json" data-schema-check="/schema/check/"' in page
    assert 'data-schema-check="/schema/check/?object=0"' in page
    assert page.count('data-code-editor="yaml"') == 1  # the config
    assert "js/code-editor.js" in page
    imports = member_client.get(f"/servers/{server.slug}/import/").content.decode()
    assert 'data-code-editor="yaml"' in imports


def test_saving_a_tool_that_calls_loopback_warns_how_the_operator_allows_it(
    member_client, server, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    config = {"method": "GET", "url": "http://127.0.0.1:9000/items"}
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        tool_post(kind="http", config=json.dumps(config)),
        follow=True,
    )
    assert response.status_code == 200
    shown = [(m.level_tag, str(m)) for m in response.context["messages"]]
    warnings = [text for level, text in shown if level == "warning"]
    assert len(warnings) == 1
    assert warnings[0].startswith("Tool “echo”: config.url: 127.0.0.1 is a loopback address")
    assert "OUTBOUND_ALLOWED_NETWORKS" in warnings[0]
    assert "127.0.0.1 is a loopback address" in response.content.decode()


def test_saving_a_tool_that_calls_a_public_host_gives_no_warning(member_client, server):
    config = {"method": "GET", "url": "https://api.example.com/items"}
    response = member_client.post(
        f"/servers/{server.slug}/tools/new/",
        tool_post(kind="http", config=json.dumps(config)),
        follow=True,
    )
    assert [m for m in response.context["messages"] if m.level_tag == "warning"] == []


def test_a_template_typo_is_reported_next_to_the_config_and_nothing_is_saved(member_client, server):
    config = json.dumps({"content": [{"type": "text", "text": "You said {{ mesage }}"}]})
    response = member_client.post(f"/servers/{server.slug}/tools/new/", tool_post(config=config))
    assert response.status_code == 400
    [error] = response.context["form"].errors["config"]
    assert "the template reads 'mesage'" in error and "did you mean 'message'?" in error
    assert not Tool.objects.filter(server=server).exists()


def test_resource_text_typed_in_a_browser_is_stored_with_lf_line_ends(member_client, server):
    # A browser submits a textarea's lines separated by CRLF (HTML form encoding).
    data = {
        "uri": "docs://crlf",
        "name": "crlf",
        "title": "",
        "description": "",
        "mime_type": "text/markdown",
        "content": "# Guide\r\n\r\nStep one.\r\nStep two.\r\n",
    }
    assert member_client.post(f"/servers/{server.slug}/resources/new/", data).status_code == 302
    assert Resource.objects.get(uri="docs://crlf").text == "# Guide\n\nStep one.\nStep two.\n"
    template = {
        "uri_template": "notes://{id}",
        "name": "note",
        "text": "Note {{ id }}\r\nbody\r\n",
        "completions": "",
    }
    assert member_client.post(f"/servers/{server.slug}/templates/new/", template).status_code == 302
    assert ResourceTemplate.objects.get(name="note").text == "Note {{ id }}\nbody\n"
