import pytest

from servers.models import Prompt, Resource, ResourceTemplate, Tool

from ..conftest import ECHO

PARTS = [
    (
        "tools",
        Tool,
        {**ECHO, "name": "shout"},
        {"description": "Shout it."},
        "description",
    ),
    (
        "resources",
        Resource,
        {"uri": "test://other", "name": "other", "text": "x"},
        {"text": "y"},
        "text",
    ),
    (
        "resource-templates",
        ResourceTemplate,
        {"uriTemplate": "test://users/{id}", "name": "user", "text": "{{ id }}"},
        {"mimeType": "text/plain"},
        "mime_type",
    ),
    (
        "prompts",
        Prompt,
        {
            "name": "bye",
            "description": "Say bye.",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Bye"}}],
        },
        {"title": "Bye!"},
        "title",
    ),
]


@pytest.mark.parametrize(("path", "model", "new", "change", "attr"), PARTS)
def test_each_part_is_listed_created_read_updated_and_deleted(
    api, server, path, model, new, change, attr
):
    base = f"/api/servers/weather/{path}/"
    assert api.get(base).json()["count"] == 1

    created = api.post(base, new, format="json")
    assert created.status_code == 201, created.json()
    row_id = created.json()["id"]
    assert created.json()["position"] == 1
    assert api.get(f"{base}{row_id}/").json()["name"] == new["name"]

    patched = api.patch(f"{base}{row_id}/", change, format="json")
    assert patched.status_code == 200, patched.json()
    assert getattr(model.objects.get(pk=row_id), attr) == next(iter(change.values()))

    put = api.put(f"{base}{row_id}/", {**new, **change, "title": "Put"}, format="json")
    assert put.status_code == 200, put.json()
    assert model.objects.get(pk=row_id).title == "Put"

    assert api.delete(f"{base}{row_id}/").status_code == 204
    assert not model.objects.filter(pk=row_id).exists()


def test_tool_writes_are_checked_by_the_kind_of_the_tool(api, server):
    response = api.post(
        "/api/servers/weather/tools/",
        {**ECHO, "name": "broken", "kind": "workflow", "config": {"steps": "nope"}},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["config"]

    unknown = api.post(
        "/api/servers/weather/tools/", {**ECHO, "name": "x", "kind": "teleport"}, format="json"
    )
    assert unknown.json()["error"]["fields"] == {"kind": ["unknown kind 'teleport'"]}


def test_tool_writes_need_the_fields_the_format_requires(api, server):
    response = api.post("/api/servers/weather/tools/", {"name": "t"}, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"description", "inputSchema"}
    bad_name = api.post("/api/servers/weather/tools/", {**ECHO, "name": "bad name!"}, format="json")
    assert bad_name.json()["error"]["fields"] == {
        "name": ["must be at most 64 characters of [A-Za-z0-9_./-]"]
    }


def test_a_duplicate_tool_name_is_reported_on_the_new_tool(api, server):
    response = api.post("/api/servers/weather/tools/", ECHO, format="json")
    assert response.status_code == 400
    assert "duplicate tool name 'echo'" in response.json()["error"]["fields"]["name"][0]


def test_renaming_a_tool_onto_itself_is_not_a_duplicate(api, server):
    tool = server.tools.get()
    response = api.patch(f"/api/servers/weather/tools/{tool.pk}/", {"name": "echo"}, format="json")
    assert response.status_code == 200


def test_a_template_string_that_does_not_compile_is_refused(api, server):
    response = api.post(
        "/api/servers/weather/prompts/",
        {
            "name": "p",
            "description": "d",
            "messages": [{"role": "user", "content": {"type": "text", "text": "{{ x"}}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["messages"]


def test_a_part_of_an_unknown_server_is_404(api, server):
    assert api.get("/api/servers/nope/tools/").status_code == 404
    assert api.post("/api/servers/nope/tools/", ECHO, format="json").status_code == 404


def test_a_part_id_of_another_server_is_404_here(api, server, org):
    from servers.models import Server

    other = Server.objects.create(organization=org, slug="other", name="other")
    tool = server.tools.get()
    assert api.get(f"/api/servers/{other.slug}/tools/{tool.pk}/").status_code == 404


def test_a_template_typo_is_refused_on_the_config_field_naming_the_argument(api, server):
    typo = {
        **ECHO,
        "name": "greet",
        "config": {"content": [{"type": "text", "text": "You said {{ mesage }}"}]},
    }
    response = api.post("/api/servers/weather/tools/", typo, format="json")
    assert response.status_code == 400
    [message] = response.json()["error"]["fields"]["config"]
    assert "reads 'mesage'" in message and "did you mean 'message'?" in message
    assert not server.tools.filter(name="greet").exists()
