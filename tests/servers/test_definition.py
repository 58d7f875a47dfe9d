import copy

import pytest

from servers.definition import (
    DefinitionError,
    dump_text,
    export_definition,
    import_definition,
    load_text,
    normalize_definition,
    validate_definition,
)
from servers.models import Server, Tool

ECHO = {
    "name": "echo",
    "description": "Echo a message back.",
    "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
    "kind": "static",
    "config": {"content": [{"type": "text", "text": "You said {{ message }}"}]},
}


def minimal(**extra):
    data = {"slug": "my-server", "name": "my server", "tools": [copy.deepcopy(ECHO)]}
    data.update(extra)
    return data


def errors_of(data):
    return validate_definition(data)


def test_a_minimal_definition_is_valid():
    assert errors_of(minimal()) == []


# --- loading -------------------------------------------------------------------------------------


def test_yaml_and_json_load_to_the_same_dict():
    assert load_text("slug: a1\nname: x\n") == load_text('{"slug": "a1", "name": "x"}')


def test_a_yaml_syntax_error_names_the_line_and_column():
    with pytest.raises(DefinitionError) as raised:
        load_text("slug: a1\nname: [unclosed\n", "server.yaml")
    assert raised.value.errors[0].startswith("server.yaml:3:1: invalid YAML")


def test_a_json_syntax_error_names_the_line_and_column():
    with pytest.raises(DefinitionError) as raised:
        load_text('{\n  "slug": "a1",\n  "name": }', "server.json")
    assert raised.value.errors[0].startswith("server.json:3:11: invalid JSON")


def test_a_yaml_flow_mapping_is_not_mistaken_for_broken_json():
    assert load_text("{slug: a1, name: x}") == {"slug": "a1", "name": "x"}


def test_a_duplicate_yaml_key_is_an_error_not_a_silent_overwrite():
    with pytest.raises(DefinitionError) as raised:
        load_text("slug: a1\nname: x\nslug: a2\n", "s.yaml")
    assert "s.yaml:3:1" in raised.value.errors[0]
    assert "duplicate key 'slug'" in raised.value.errors[0]


def test_a_duplicate_json_key_is_an_error_too():
    with pytest.raises(DefinitionError, match="duplicate key 'slug'"):
        load_text('{"slug": "a1", "name": "x", "slug": "a2"}', "s.json")


def test_a_document_that_is_not_a_mapping_is_refused():
    with pytest.raises(DefinitionError, match="must be a mapping"):
        load_text("- just\n- a list\n")


def test_a_multiline_string_dumps_as_a_readable_block():
    text = dump_text({"instructions": "line one\nline two\n"})
    assert "instructions: |" in text
    assert load_text(text) == {"instructions": "line one\nline two\n"}


# --- validation, one test per rule ------------------------------------------------------------


def test_slug_and_name_are_required():
    assert set(errors_of({})) == {"slug: required", "name: required"}


def test_a_slug_must_match_the_slug_format():
    (error,) = errors_of(minimal(slug="Bad_Slug"))
    assert error.startswith("slug: must be 2-63 characters")


def test_an_unknown_top_level_key_is_an_error():
    assert errors_of(minimal(tols=[])) == ["tols: unknown field"]


def test_auth_must_be_a_known_mode():
    assert errors_of(minimal(auth="password")) == [
        "auth: must be one of none, api_key, oauth, api_key+oauth, not 'password'"
    ]


def test_every_auth_mode_is_accepted():
    for mode in ("none", "api_key", "oauth", "api_key+oauth"):
        assert errors_of(minimal(auth=mode)) == []


def test_status_must_be_a_known_status():
    assert errors_of(minimal(status="live")) == [
        "status: must be one of active, paused, draft, not 'live'"
    ]


def test_a_version_that_yaml_read_as_a_number_is_reported():
    assert errors_of(minimal(version=1.0)) == ["version: must be a string, not float"]


def test_allowed_origins_must_be_origins():
    assert errors_of(minimal(allowedOrigins=["https://ok.example", "not an origin"])) == [
        "allowedOrigins[1]: must be an origin like https://app.example.com"
    ]


def test_a_tool_name_longer_than_64_characters_is_refused():
    data = minimal()
    data["tools"][0]["name"] = "x" * 65
    assert errors_of(data) == ["tools[0].name: must be at most 64 characters of [A-Za-z0-9_./-]"]


def test_a_tool_name_with_a_space_is_refused():
    data = minimal()
    data["tools"][0]["name"] = "two words"
    assert errors_of(data) == ["tools[0].name: must be at most 64 characters of [A-Za-z0-9_./-]"]


def test_tool_names_must_be_unique():
    data = minimal()
    data["tools"].append(copy.deepcopy(ECHO))
    assert errors_of(data) == ["tools[1].name: duplicate tool name 'echo' (also at tools[0].name)"]


def test_a_tool_needs_a_description_and_an_input_schema():
    data = minimal()
    del data["tools"][0]["description"]
    del data["tools"][0]["inputSchema"]
    assert errors_of(data) == ["tools[0].description: required", "tools[0].inputSchema: required"]


def test_an_invalid_input_schema_is_reported_at_its_path():
    data = minimal()
    data["tools"][0]["inputSchema"] = {"type": "objekt"}
    (error,) = errors_of(data)
    assert error.startswith("tools[0].inputSchema.type: 'objekt' is not valid under any of")


def test_an_input_schema_must_describe_an_object():
    data = minimal()
    data["tools"][0]["inputSchema"] = {"type": "string"}
    assert errors_of(data) == ["tools[0].inputSchema.type: must be 'object'"]


def test_an_output_schema_is_checked_like_an_input_schema():
    data = minimal()
    data["tools"][0]["outputSchema"] = {"type": "object", "properties": {"n": {"type": 5}}}
    (error,) = errors_of(data)
    assert error.startswith("tools[0].outputSchema.properties.n.type: 5 is not valid")


def test_an_unknown_tool_field_is_an_error():
    data = minimal()
    data["tools"][0]["descripton"] = "typo"
    assert errors_of(data) == ["tools[0].descripton: unknown field"]


def test_an_unknown_kind_is_an_error():
    data = minimal()
    data["tools"][0]["kind"] = "telepathy"
    assert errors_of(data) == ["tools[0].kind: unknown kind 'telepathy'"]


def test_the_kinds_config_errors_are_placed_under_the_tool():
    data = minimal()
    data["tools"][0]["config"] = {"content": [{"type": "txt"}]}
    errors = errors_of(data)
    assert errors and all(e.startswith("tools[0].config.content[0]") for e in errors)


def test_a_template_syntax_error_in_a_tool_is_reported():
    data = minimal()
    data["tools"][0]["config"] = {"content": [{"type": "text", "text": "{{ oops"}]}
    (error,) = errors_of(data)
    assert error.startswith("tools[0].config")


def test_execution_task_support_must_be_known():
    data = minimal()
    data["tools"][0]["execution"] = {"taskSupport": "sometimes"}
    assert errors_of(data) == [
        "tools[0].execution.taskSupport: must be one of forbidden, optional, required, "
        "not 'sometimes'"
    ]


def test_enabled_must_be_a_boolean():
    data = minimal()
    data["tools"][0]["enabled"] = "yes"
    assert errors_of(data) == ["tools[0].enabled: must be true or false, not a string"]


def test_an_icon_needs_a_src():
    data = minimal(icons=[{"mimeType": "image/png"}])
    assert errors_of(data) == ["icons[0].src: required"]


def test_a_resource_needs_uri_and_name():
    data = minimal(resources=[{"text": "hi"}])
    assert errors_of(data) == ["resources[0].uri: required", "resources[0].name: required"]


def test_a_resource_needs_exactly_one_of_text_or_blob():
    both = {"uri": "x://a", "name": "a", "text": "t", "blob": "aGk="}
    neither = {"uri": "x://b", "name": "b"}
    assert errors_of(minimal(resources=[both, neither])) == [
        "resources[0]: needs exactly one of text or blob",
        "resources[1]: needs exactly one of text or blob",
    ]


def test_a_resource_blob_must_be_base64():
    res = {"uri": "x://a", "name": "a", "blob": "not base64!"}
    assert errors_of(minimal(resources=[res])) == ["resources[0].blob: must be valid base64"]


def test_resource_uris_must_be_unique():
    res = {"uri": "x://a", "name": "a", "text": "t"}
    assert errors_of(minimal(resources=[res, dict(res)])) == [
        "resources[1].uri: duplicate resource uri 'x://a' (also at resources[0].uri)"
    ]


def test_a_template_needs_uri_template_and_name():
    assert errors_of(minimal(resourceTemplates=[{"text": "x"}])) == [
        "resourceTemplates[0].uriTemplate: required",
        "resourceTemplates[0].name: required",
    ]


def test_template_completions_must_name_a_variable():
    tpl = {"uriTemplate": "x://{id}", "name": "t", "text": "{{ id }}", "completions": {"di": ["1"]}}
    assert errors_of(minimal(resourceTemplates=[tpl])) == [
        "resourceTemplates[0].completions.di: names no argument/variable of this item"
    ]


def test_a_prompt_needs_a_name_and_a_description():
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
    assert errors_of(minimal(prompts=[prompt])) == [
        "prompts[0].name: required",
        "prompts[0].description: required",
    ]


def test_prompt_argument_names_must_be_unique():
    prompt = {
        "name": "p",
        "description": "d",
        "arguments": [{"name": "a"}, {"name": "a"}],
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    }
    assert errors_of(minimal(prompts=[prompt])) == [
        "prompts[0].arguments[1].name: duplicate argument name 'a' (also at prompts[0].arguments[0].name)"
    ]


def test_a_prompt_message_needs_a_known_role_and_a_content_block():
    prompt = {
        "name": "p",
        "description": "d",
        "messages": [
            {"role": "system", "content": {"type": "text", "text": "hi"}},
            {"role": "user"},
        ],
    }
    assert errors_of(minimal(prompts=[prompt])) == [
        "prompts[0].messages[0].role: must be user or assistant, not 'system'",
        "prompts[0].messages[1].content: required",
    ]


def test_a_prompt_content_block_must_be_complete():
    prompt = {
        "name": "p",
        "description": "d",
        "messages": [{"role": "user", "content": {"type": "image", "data": "aGk="}}],
    }
    assert errors_of(minimal(prompts=[prompt])) == [
        "prompts[0].messages[0].content.mimeType: required"
    ]


def test_every_error_is_reported_at_once():
    data = minimal(slug="X", auth="magic", extra=1)
    data["tools"][0]["name"] = "bad name"
    assert len(errors_of(data)) == 4


# --- export and import -------------------------------------------------------------------------


def full_definition():
    return {
        "slug": "full",
        "name": "full",
        "title": "Full",
        "version": "2.1.0",
        "instructions": "Use it well.",
        "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png"}],
        "auth": "none",
        "status": "paused",
        "allowedOrigins": ["https://app.example.com"],
        "tools": [
            {
                **ECHO,
                "title": "Echo",
                "outputSchema": {"type": "object", "properties": {"echo": {"type": "string"}}},
                "annotations": {"readOnlyHint": True},
                "icons": [{"src": "https://example.com/e.png"}],
                "execution": {"taskSupport": "optional"},
                "_meta": {"example.com/x": 1},
                "enabled": False,
            },
            {**ECHO, "name": "second"},
        ],
        "resources": [
            {
                "uri": "x://bin",
                "name": "bin",
                "title": "Bin",
                "description": "d",
                "mimeType": "application/octet-stream",
                "blob": "AAEC",
                "size": 3,
                "annotations": {"priority": 0.5},
                "icons": [{"src": "https://example.com/r.png"}],
                "_meta": {"k": "v"},
            }
        ],
        "resourceTemplates": [
            {
                "uriTemplate": "x://items/{id}",
                "name": "item",
                "mimeType": "application/json",
                "text": '{"id": "{{ id }}"}',
                "completions": {"id": ["1", "2"]},
            }
        ],
        "prompts": [
            {
                "name": "greet",
                "title": "Greet",
                "description": "Say hello",
                "arguments": [{"name": "who", "required": True}],
                "messages": [{"role": "user", "content": {"type": "text", "text": "Hi {{ who }}"}}],
                "completions": {"who": ["alice"]},
                "_meta": {"m": True},
            }
        ],
    }


@pytest.mark.django_db
def test_every_field_of_the_format_survives_import_and_export(org):
    data = full_definition()
    server = import_definition(data, org)
    assert export_definition(server) == data


@pytest.mark.django_db
def test_defaults_are_left_out_of_an_export(org):
    data = minimal()
    data["tools"][0]["enabled"] = True
    data["tools"][0]["title"] = ""
    exported = export_definition(import_definition(data, org))
    assert exported == normalize_definition(data)
    assert "enabled" not in exported["tools"][0]
    assert exported["auth"] == "api_key" and exported["status"] == "active"


@pytest.mark.django_db
def test_an_invalid_definition_creates_nothing(org):
    with pytest.raises(DefinitionError):
        import_definition(minimal(auth="magic"), org)
    assert not Server.objects.filter(organization=org).exists()


@pytest.mark.django_db
def test_importing_an_existing_slug_without_replace_suggests_replace(org):
    import_definition(minimal(), org)
    with pytest.raises(DefinitionError) as raised:
        import_definition(minimal(), org)
    assert "--replace" in raised.value.errors[0]


@pytest.mark.django_db
def test_replace_rewrites_every_row_of_the_server(org):
    first = import_definition(full_definition(), org)
    replacement = minimal(slug="full", title="Smaller")
    second = import_definition(replacement, org, replace=True)
    assert second.pk == first.pk
    assert export_definition(second) == normalize_definition(replacement)
    assert list(Tool.objects.filter(server=second).values_list("name", flat=True)) == ["echo"]


@pytest.mark.django_db
def test_an_outsider_cannot_import_over_another_organizations_slug(org, outsider_org):
    import_definition(minimal(title="Alice's"), org)
    for replace in (False, True):
        with pytest.raises(DefinitionError) as raised:
            import_definition(minimal(title="Mallory's"), outsider_org, replace=replace)
        assert raised.value.errors == ["slug: already taken"]
    server = Server.objects.get(slug="my-server")
    assert server.organization == org and server.title == "Alice's"


@pytest.mark.django_db
def test_a_user_cannot_import_into_an_organization_they_do_not_belong_to(org, outsider):
    with pytest.raises(DefinitionError, match="not a member"):
        import_definition(minimal(), org, user=outsider)
    assert not Server.objects.filter(organization=org).exists()


def test_it_checks_and_round_trips_the_servers_shared_http_settings(org):
    from servers.definition import export_definition, import_definition, validate_definition

    base = {"slug": "with-http", "name": "with http", "tools": []}
    bad = validate_definition({**base, "http": {"baseUrl": "ftp://x", "nope": 1}})
    assert "http.baseUrl: must be an http(s) URL" in bad
    assert "http.nope: unknown field" in bad
    good = {**base, "http": {"baseUrl": "https://api.example.com"}}
    assert validate_definition(good) == []
    server = import_definition(good, org)
    assert export_definition(server)["http"] == {"baseUrl": "https://api.example.com"}


STATIC_NOTE = {"uri": "note://hello", "name": "hello", "mimeType": "text/plain", "text": "Hi"}
FETCHED = {
    "uri": "docs://changelog",
    "name": "changelog",
    "mimeType": "text/markdown",
    "kind": "fetched",
    "config": {
        "url": "https://example.com/CHANGELOG.md",
        "headers": {"Authorization": "Bearer {{ secrets.DOCS_TOKEN }}"},
        "cacheTtlSeconds": 60,
        "maxBytes": 4096,
    },
}
UPSTREAM_NOTE = {
    "uri": "notes://welcome",
    "name": "welcome",
    "kind": "upstream",
    "config": {
        "url": "https://mcp.example.com/mcp",
        "transport": "sse",
        "headers": {"Authorization": "Bearer {{ secrets.NOTES_TOKEN }}"},
        "uri": "upstream://welcome",
    },
}


@pytest.mark.django_db
def test_fetched_and_upstream_resources_round_trip_exactly(org):
    data = minimal(resources=copy.deepcopy([STATIC_NOTE, FETCHED, UPSTREAM_NOTE]))
    assert errors_of(data) == []
    canonical = normalize_definition(data)
    assert canonical["resources"] == data["resources"]
    exported = export_definition(import_definition(data, org))
    assert exported == canonical
    assert load_text(dump_text(exported)) == canonical
    assert load_text(dump_text(exported, "json"), "x.json") == canonical


@pytest.mark.django_db
def test_a_static_resource_exports_as_before_without_kind_or_config(org):
    data = minimal(resources=[{**STATIC_NOTE, "kind": "static", "config": {}}])
    exported = export_definition(import_definition(data, org))
    assert exported["resources"] == [STATIC_NOTE]
    assert exported == normalize_definition(data)


def test_a_fetched_or_upstream_resource_has_no_text_or_blob():
    errors = errors_of(
        minimal(resources=[{**FETCHED, "text": "x"}, {**UPSTREAM_NOTE, "blob": "eA=="}])
    )
    assert errors == [
        "resources[0].text: a fetched resource reads its content; it has no text",
        "resources[1].blob: an upstream resource reads its content; it has no blob",
    ]


def test_a_static_resource_takes_no_config_and_kinds_must_be_known():
    errors = errors_of(
        minimal(
            resources=[
                {**STATIC_NOTE, "config": {"url": "https://x.test"}},
                {"uri": "x://y", "name": "y", "kind": "magic"},
            ]
        )
    )
    assert errors == [
        "resources[0].config: only resources of kind fetched or upstream have a config",
        "resources[1].kind: unknown kind 'magic' (known kinds: fetched, static, upstream)",
    ]


def test_resource_config_errors_are_placed_under_the_resource():
    bad_fetch = {**FETCHED, "config": {"url": "https://x.test/{id}", "verb": "POST"}}
    bad_upstream = {**UPSTREAM_NOTE, "config": {"transport": "ws"}}
    errors = errors_of(minimal(resources=[bad_fetch, bad_upstream]))
    assert errors[0] == "resources[0].config.verb: unknown field"
    assert errors[1].startswith("resources[0].config.url: a fetched resource has no arguments")
    assert errors[2:] == [
        "resources[1].config.url: required, the upstream's http(s) MCP endpoint",
        "resources[1].config.transport: must be one of streamable-http, sse",
    ]


STATIC_PROMPT = {
    "name": "hello",
    "description": "Say hello.",
    "messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}],
}
UPSTREAM_PROMPT = {
    "name": "greet",
    "description": "Greet someone.",
    "arguments": [{"name": "who", "required": True}],
    "kind": "upstream",
    "config": {
        "url": "https://mcp.example.com/mcp",
        "transport": "sse",
        "headers": {"Authorization": "Bearer {{ secrets.PROMPTS_TOKEN }}"},
        "prompt": "greet-someone",
        "timeoutSeconds": 10,
    },
}


@pytest.mark.django_db
def test_upstream_prompts_round_trip_exactly(org):
    data = minimal(prompts=copy.deepcopy([STATIC_PROMPT, UPSTREAM_PROMPT]))
    assert errors_of(data) == []
    canonical = normalize_definition(data)
    assert canonical["prompts"] == data["prompts"]
    exported = export_definition(import_definition(data, org))
    assert exported == canonical
    assert load_text(dump_text(exported)) == canonical


@pytest.mark.django_db
def test_a_static_prompt_exports_as_before_without_kind_or_config(org):
    data = minimal(prompts=[{**STATIC_PROMPT, "kind": "static", "config": {}}])
    exported = export_definition(import_definition(data, org))
    assert exported["prompts"] == [STATIC_PROMPT]


def test_an_upstream_prompt_has_no_messages_and_a_static_one_no_config():
    errors = errors_of(
        minimal(
            prompts=[
                {**UPSTREAM_PROMPT, "messages": STATIC_PROMPT["messages"]},
                {**STATIC_PROMPT, "config": {"url": "https://x.test"}},
                {"name": "odd", "description": "?", "kind": "magic"},
            ]
        )
    )
    assert errors == [
        "prompts[0].messages: an upstream prompt gets its messages; it has none here",
        "prompts[1].config: a static prompt's config may only hold steps",
        "prompts[2].kind: unknown kind 'magic' (known kinds: static, upstream)",
    ]


def test_prompt_config_errors_are_placed_under_the_prompt():
    bad = {**UPSTREAM_PROMPT, "config": {"transport": "ws", "prompt": 3, "tool": "x"}}
    assert errors_of(minimal(prompts=[bad])) == [
        "prompts[0].config.tool: unknown field",
        "prompts[0].config.url: required, the upstream's http(s) MCP endpoint",
        "prompts[0].config.transport: must be one of streamable-http, sse",
        "prompts[0].config.prompt: must be the upstream's name for the prompt",
    ]


def test_it_refuses_a_schema_ref_that_points_outside_the_schema():
    from servers.definition import validate_definition

    definition = {
        "slug": "remote-ref",
        "name": "remote ref",
        "tools": [
            {
                "name": "t",
                "description": "d",
                "inputSchema": {
                    "type": "object",
                    "properties": {"x": {"$ref": "http://127.0.0.1/x"}},
                },
                "kind": "static",
                "config": {"content": [{"type": "text", "text": "hi"}]},
            }
        ],
    }
    errors = validate_definition(definition)
    assert any("tools[0].inputSchema.properties.x.$ref" in e and "remote" in e for e in errors)
