import copy
import dataclasses

import orjson
import pytest
from asgiref.sync import async_to_sync

from infra import keys
from infra.redis import sync_client
from servers.models import Server, Tool
from servers.snapshot import (
    DefinitionError,
    clear_cache,
    compile_definition,
    get_snapshot,
    load_snapshot,
)

SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {"$anchor": "addr", "type": "object", "properties": {"city": {"type": "string"}}}
    },
    "properties": {
        "home": {"$ref": "#/$defs/address"},
        "kind": {"type": "string"},
    },
    "if": {"properties": {"kind": {"const": "home"}}},
    "then": {"required": ["home"]},
    "additionalProperties": False,
}


def definition(**extra):
    return {
        "slug": "demo",
        "name": "demo",
        "title": "Demo server",
        "version": "2.0.0",
        "instructions": "Be nice.",
        "auth": "none",
        "status": "active",
        "allowedOrigins": ["https://app.example.com"],
        "tools": [
            {
                "name": "echo",
                "description": "Echo.",
                "inputSchema": {"type": "object"},
                "kind": "static",
                "config": {"content": [{"type": "text", "text": "{{ message }}"}]},
            },
            {
                "name": "off",
                "description": "Disabled.",
                "inputSchema": {"type": "object"},
                "enabled": False,
                "config": {"content": []},
            },
            {
                "name": "schema",
                "title": "Schema",
                "description": "2020-12.",
                "inputSchema": SCHEMA_2020_12,
                "outputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
                "execution": {"taskSupport": "optional"},
                "_meta": {"x": 1},
                "config": {"content": [], "structuredContent": {}},
            },
        ],
        "resources": [
            {
                "uri": "test://static-text",
                "name": "static-text",
                "mimeType": "text/plain",
                "text": "hello",
            },
            {
                "uri": "test://static-binary",
                "name": "static-binary",
                "mimeType": "image/png",
                "blob": "iVBORw0KGgo=",
            },
        ],
        "resourceTemplates": [
            {
                "uriTemplate": "test://template/{id}/data",
                "name": "template",
                "mimeType": "application/json",
                "text": '{"id":"{{ id }}"}',
                "completions": {"id": ["1", "2"]},
            },
        ],
        "prompts": [
            {
                "name": "greet",
                "description": "Greets.",
                "arguments": [{"name": "who", "required": True}],
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "Hello {{ who }}"}}
                ],
            },
        ],
        **extra,
    }


def compile_it(data=None):
    return compile_definition(data or definition(), server_id=7, organization_id=3, generation="5")


def test_it_compiles_the_server_identity_and_capabilities():
    snapshot = compile_it()
    assert (snapshot.server_id, snapshot.organization_id, snapshot.slug, snapshot.generation) == (
        7,
        3,
        "demo",
        "5",
    )
    assert dict(snapshot.server_info) == {
        "name": "demo",
        "title": "Demo server",
        "version": "2.0.0",
    }
    assert snapshot.instructions == "Be nice."
    assert (snapshot.status, snapshot.auth_mode) == ("active", "none")
    assert snapshot.allowed_origins == frozenset({"https://app.example.com"})
    assert dict(snapshot.capabilities) == {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
        "completions": {},
        "logging": {},
        # One of its tools supports tasks, so the tasks extension is advertised.
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }


def test_only_enabled_tools_are_served_in_definition_order():
    snapshot = compile_it()
    assert [tool["name"] for tool in snapshot.tool_list] == ["echo", "schema"]
    assert set(snapshot.tools) == {"echo", "schema"}


def test_the_tool_wire_keeps_the_schema_verbatim():
    wire = compile_it().tools["schema"].wire
    assert wire == {
        "name": "schema",
        "title": "Schema",
        "description": "2020-12.",
        "inputSchema": SCHEMA_2020_12,
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
        "execution": {"taskSupport": "optional"},
        "_meta": {"x": 1},
    }
    assert compile_it().tools["echo"].wire == {
        "name": "echo",
        "description": "Echo.",
        "inputSchema": {"type": "object"},
    }


def test_input_validators_follow_draft_2020_12_refs_and_conditionals():
    tool = compile_it().tools["schema"]
    assert tool.input_validator.is_valid({"kind": "home", "home": {"city": "Oslo"}})
    assert not tool.input_validator.is_valid({"kind": "home"})
    assert not tool.input_validator.is_valid({"home": {"city": 5}})
    assert tool.output_validator is not None and compile_it().tools["echo"].output_validator is None


def test_task_support_is_read_from_execution():
    snapshot = compile_it()
    assert snapshot.tools["schema"].task_support == "optional"
    assert snapshot.tools["echo"].task_support == "forbidden"


def test_the_header_parameters_of_each_tool_are_read_once_when_it_is_compiled():
    data = definition()
    data["tools"][0]["inputSchema"] = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "text": {"type": "string"},
        },
    }
    snapshot = compile_it(data)
    assert snapshot.tools["echo"].header_parameters == (("region", "mcp-param-region"),)
    assert snapshot.tools["schema"].header_parameters == ()


def test_resources_templates_and_prompts_are_compiled():
    snapshot = compile_it()
    assert snapshot.resources["test://static-binary"].contents == {
        "uri": "test://static-binary",
        "mimeType": "image/png",
        "blob": "iVBORw0KGgo=",
    }
    assert [r["uri"] for r in snapshot.resource_list] == [
        "test://static-text",
        "test://static-binary",
    ]
    assert snapshot.template_list == (
        {
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "mimeType": "application/json",
        },
    )
    assert snapshot.resource_templates[0].match("test://template/9/data") == {"id": "9"}
    assert snapshot.prompt_list == (
        {
            "name": "greet",
            "description": "Greets.",
            "arguments": [{"name": "who", "required": True}],
        },
    )
    assert snapshot.prompts["greet"].required_arguments == ("who",)


def test_a_snapshot_cannot_be_changed():
    snapshot = compile_it()
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.slug = "other"
    with pytest.raises(TypeError):
        snapshot.tools["new"] = snapshot.tools["echo"]
    with pytest.raises(TypeError):
        snapshot.capabilities["experimental"] = {}
    assert isinstance(snapshot.tool_list, tuple)
    with pytest.raises(TypeError):
        snapshot.tool_list[0]["name"] = "renamed"
    with pytest.raises(TypeError):
        snapshot.tools["schema"].wire["inputSchema"]["properties"]["kind"]["type"] = "number"
    with pytest.raises(TypeError):
        snapshot.prompt_list[0]["arguments"].append({"name": "extra"})
    with pytest.raises(TypeError):
        snapshot.server_info["name"] = "other"


def test_changing_the_definition_afterwards_does_not_reach_the_snapshot():
    data = copy.deepcopy(definition())
    snapshot = compile_it(data)
    data["tools"][2]["inputSchema"]["properties"]["kind"]["type"] = "number"
    assert snapshot.tools["schema"].wire["inputSchema"] == SCHEMA_2020_12
    assert snapshot.tools["schema"].input_validator.is_valid({"kind": "away"})


def test_what_the_endpoint_sends_serializes_with_orjson():
    snapshot = compile_it()
    payload = {
        "capabilities": snapshot.capabilities,
        "serverInfo": snapshot.server_info,
        "tools": list(snapshot.tool_list),
        "resources": list(snapshot.resource_list),
        "templates": list(snapshot.template_list),
        "prompts": list(snapshot.prompt_list),
    }
    assert orjson.loads(orjson.dumps(payload))["tools"][1]["inputSchema"] == SCHEMA_2020_12


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"tools": [{"name": "t", "description": "d", "kind": "teleport"}]},
            "tools[0].kind: Unknown tool kind",
        ),
        (
            {
                "tools": [
                    {"name": "t", "description": "d", "config": {"content": [{"type": "text"}]}}
                ]
            },
            "tools[0].config.content[0].text: required",
        ),
        (
            {
                "tools": [
                    {
                        "name": "t",
                        "description": "d",
                        "inputSchema": {"type": "nonsense"},
                        "config": {"content": []},
                    }
                ]
            },
            "tools[0].inputSchema: not a valid JSON Schema",
        ),
        (
            {
                "tools": [
                    {
                        "name": "t",
                        "description": "d",
                        "execution": {"taskSupport": "maybe"},
                        "config": {"content": []},
                    }
                ]
            },
            "tools[0].execution.taskSupport",
        ),
        (
            {"resourceTemplates": [{"uriTemplate": "x/{a", "name": "n"}]},
            "resourceTemplates[0].uriTemplate",
        ),
        (
            {
                "prompts": [
                    {
                        "name": "p",
                        "messages": [{"role": "user", "content": {"type": "text", "text": "{{ x"}}],
                    }
                ]
            },
            "prompts[0].messages: Template syntax error",
        ),
    ],
)
def test_a_broken_definition_is_refused_naming_the_field(change, message):
    with pytest.raises(DefinitionError) as raised:
        compile_it(definition(**change))
    assert message in str(raised.value)


# -- the cache ----------------------------------------------------------------------------------


@pytest.fixture
def server(org):
    clear_cache()
    server = Server.objects.create(
        organization=org, slug="cached-demo", name="cached", auth_mode="none"
    )
    Tool.objects.create(
        server=server,
        name="echo",
        description="Echo.",
        input_schema={"type": "object"},
        config={"content": [{"type": "text", "text": "hi"}]},
    )
    yield server
    clear_cache()


def test_it_loads_a_server_by_slug_into_a_snapshot(server):
    snapshot = async_to_sync(get_snapshot)("cached-demo", "3")
    assert (snapshot.server_id, snapshot.organization_id, snapshot.generation) == (
        server.pk,
        server.organization_id,
        "3",
    )
    assert [tool["name"] for tool in snapshot.tool_list] == ["echo"]


def test_a_warm_hit_runs_no_sql(server, django_assert_num_queries):
    first = async_to_sync(get_snapshot)("cached-demo", "1")
    with django_assert_num_queries(0):
        assert async_to_sync(get_snapshot)("cached-demo", "1") is first


def test_a_new_generation_reloads_the_rows(server):
    first = async_to_sync(get_snapshot)("cached-demo", None)
    assert first.generation == "0"
    Tool.objects.create(
        server=server, name="second", description="d", position=1, config={"content": []}
    )
    assert async_to_sync(get_snapshot)("cached-demo", "0") is first
    again = async_to_sync(get_snapshot)("cached-demo", "1")
    assert [tool["name"] for tool in again.tool_list] == ["echo", "second"]


def test_an_unknown_slug_is_none_and_cached_until_the_generation_moves(
    db, django_assert_num_queries
):
    clear_cache()
    assert async_to_sync(get_snapshot)("no-such-server", None) is None
    with django_assert_num_queries(0):
        assert async_to_sync(get_snapshot)("no-such-server", None) is None
    with django_assert_num_queries(1):
        assert async_to_sync(get_snapshot)("no-such-server", "1") is None


def test_load_snapshot_reads_the_generation_from_redis(server, django_assert_num_queries):
    redis = sync_client()
    redis.set(keys.server_generation("cached-demo"), "42")
    try:
        snapshot = load_snapshot("cached-demo")
        assert snapshot.generation == "42"
        with django_assert_num_queries(0):
            assert load_snapshot("cached-demo") is snapshot
    finally:
        redis.delete(keys.server_generation("cached-demo"))


def test_a_broken_stored_definition_raises_once_per_generation_without_more_sql(
    server, django_assert_num_queries
):
    Tool.objects.filter(server=server).update(config={"content": [{"type": "video"}]})
    with pytest.raises(DefinitionError, match=r"tools\[0\]\.config\.content\[0\]\.type"):
        async_to_sync(get_snapshot)("cached-demo", "8")
    with django_assert_num_queries(0), pytest.raises(DefinitionError):
        async_to_sync(get_snapshot)("cached-demo", "8")
    Tool.objects.filter(server=server).update(config={"content": []})
    assert async_to_sync(get_snapshot)("cached-demo", "9").tools["echo"]


def test_kinds_see_the_server_they_belong_to(monkeypatch):
    from servers.kinds import static

    seen = []
    original = static.compile

    def spy(tool_def):
        seen.append(tool_def["_server"])
        return original(tool_def)

    monkeypatch.setattr(static, "compile", spy)
    compile_it(definition(http={"baseUrl": "https://api.example.com"}))
    assert seen[0] == {
        "id": 7,
        "organizationId": 3,
        "ownerId": None,
        "http": {"baseUrl": "https://api.example.com"},
        "code": {},
    }


def test_a_loaded_snapshot_and_its_code_tools_know_the_organizations_paying_account(server, user):
    Tool.objects.create(
        server=server,
        name="sum",
        description="Code.",
        input_schema={"type": "object"},
        kind="code",
        config={"language": "python", "source": "def main(args):\n    return 1\n"},
    )
    snapshot = load_snapshot("cached-demo")
    assert server.organization.billing_owner == user
    assert snapshot.owner_id == user.pk
    assert snapshot.tools["sum"].compiled.owner_id == user.pk


def test_the_cache_holds_at_most_its_size_in_settings(settings):
    from servers import snapshot

    assert snapshot._cache.maxsize == settings.SNAPSHOT_CACHE_SIZE


def test_the_least_recently_used_snapshot_is_compiled_again_and_served_the_same(
    org, monkeypatch, django_assert_num_queries
):
    from cachetools import LRUCache

    from servers import snapshot

    monkeypatch.setattr(snapshot, "_cache", LRUCache(2))
    for slug in ("lru-a", "lru-b", "lru-c"):
        server = Server.objects.create(organization=org, slug=slug, name=slug, auth_mode="none")
        Tool.objects.create(server=server, name="echo", description="E.", config={"content": []})
    first_a = async_to_sync(get_snapshot)("lru-a", "1")
    async_to_sync(get_snapshot)("lru-b", "1")
    with django_assert_num_queries(0):
        assert async_to_sync(get_snapshot)("lru-a", "1") is first_a  # now the most recent
    async_to_sync(get_snapshot)("lru-c", "1")  # evicts lru-b, the least recently used
    assert set(snapshot._cache) == {"lru-a", "lru-c"}
    with django_assert_num_queries(0):
        assert async_to_sync(get_snapshot)("lru-a", "1") is first_a
    again_b = async_to_sync(get_snapshot)("lru-b", "1")  # compiled again, from the rows
    assert [tool["name"] for tool in again_b.tool_list] == ["echo"]
    assert len(snapshot._cache) == 2


def test_definitions_of_different_servers_share_their_keys_and_short_strings():
    import sys

    def definition(slug):
        return {
            "slug": slug,
            "name": "".join(["Echo ", slug]),
            "tools": [
                {
                    "name": "".join(["ec", "ho"]),
                    "kind": "".join(["sta", "tic"]),
                    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
                    "config": {"content": [{"type": "text", "text": "{{ text }}"}]},
                }
            ],
        }

    first = compile_definition(definition("one"), server_id=1, organization_id=1, generation="1")
    second = compile_definition(definition("two"), server_id=2, organization_id=1, generation="1")
    (name_one,), (name_two,) = first.tools, second.tools
    assert name_one is name_two is sys.intern("echo")
    assert first.tools["echo"].kind is second.tools["echo"].kind
    info_one, info_two = (dict(snapshot.server_info) for snapshot in (first, second))
    assert [key for key in info_one] == [key for key in info_two]
    assert all(a is b for a, b in zip(info_one, info_two, strict=True))
    assert info_one["name"] == "Echo one" and info_two["name"] == "Echo two"
