"""Committing a preview, and calling what was committed through the real http kind."""

from urllib.parse import parse_qs

import pytest
import yaml
from asgiref.sync import async_to_sync
from werkzeug import Response

from integrations.importers import ImportFailed, commit_import, parse_openapi, parse_postman
from mcp_protocol.context import NullContext
from servers.kinds import http
from servers.models import Tool
from vault.models import Secret


def run_tool(tool: Tool, arguments: dict) -> dict:
    """The http kind's own compile and call, as the snapshot would run them."""
    tool_def = {
        "name": tool.name,
        "config": tool.config,
        "_server": {"id": tool.server_id, "organizationId": tool.server.organization_id},
    }
    return async_to_sync(http.call)(http.compile(tool_def), arguments, NullContext())


@pytest.fixture
def petstore(data, httpserver):
    document = yaml.safe_load((data / "petstore-3.0.yaml").read_text())
    document["servers"] = [{"url": httpserver.url_for("/v2")}]
    return parse_openapi(document)


def test_selected_operations_land_as_disabled_http_tools(server, petstore):
    tools = commit_import(server, petstore, ["getPetById", "POST /pets", "updatePetWithForm"])
    assert [t.name for t in tools] == ["getPetById", "createPet", "updatePetWithForm"]
    rows = list(server.tools.order_by("position"))
    assert rows == tools
    for tool in rows:
        assert tool.kind == "http"
        assert tool.enabled is False  # a draft until someone reviews it
        assert http.validate_config(tool.config) == []
    assert rows[0].input_schema["required"] == ["petId"]
    assert rows[0].annotations["readOnlyHint"] is True


def test_names_taken_on_the_server_get_a_suffix(server, petstore):
    Tool.objects.create(server=server, name="listPets", description="mine", position=1)
    tools = commit_import(server, petstore, ["listPets"])
    assert tools[0].name == "listPets_2"
    assert tools[0].position == 2


def test_an_unknown_selection_imports_nothing(server, petstore):
    with pytest.raises(ImportFailed, match="no operation named 'nope'"):
        commit_import(server, petstore, ["getPetById", "nope"])
    assert not server.tools.exists()


def test_everything_is_imported_when_nothing_is_selected(server, petstore):
    tools = commit_import(server, petstore)
    assert len(tools) == len(petstore.operations) == 8


def test_an_imported_get_calls_the_api_with_its_secret(
    server, petstore, httpserver, loopback_allowed
):
    Secret.store(server.organization, "PETSTORE_API_KEY", "pk-live-123")
    (tool,) = commit_import(server, petstore, ["getPetById"])
    httpserver.expect_request(
        "/v2/pets/7", method="GET", headers={"X-API-Key": "pk-live-123"}
    ).respond_with_json({"id": 7, "name": "Rex"})
    result = run_tool(tool, {"petId": 7})
    assert result.get("isError") is not True, result
    assert '"name":"Rex"' in result["content"][0]["text"].replace(" ", "")


def test_an_imported_post_sends_its_json_body_and_bearer_token(
    server, data, httpserver, loopback_allowed
):
    # A plain bearer scheme (the document's oauth2 one proposes a connection instead).
    document = yaml.safe_load((data / "petstore-3.0.yaml").read_text())
    document["servers"] = [{"url": httpserver.url_for("/v2")}]
    document["components"]["securitySchemes"]["petstore_auth"] = {
        "type": "http",
        "scheme": "bearer",
    }
    Secret.store(server.organization, "PETSTORE_AUTH_TOKEN", "tok-456")
    (tool,) = commit_import(server, parse_openapi(document), ["createPet"])
    httpserver.expect_request(
        "/v2/pets",
        method="POST",
        headers={"Authorization": "Bearer tok-456"},
        json={"name": "Rex", "status": "available", "category": {"name": "dogs"}},
    ).respond_with_json({"id": 8, "name": "Rex"}, status=201)
    result = run_tool(tool, {"name": "Rex", "status": "available", "category": {"name": "dogs"}})
    assert result.get("isError") is not True, result


def test_an_imported_form_operation_sends_form_fields(
    server, petstore, httpserver, loopback_allowed
):
    Secret.store(server.organization, "PETSTORE_API_KEY", "pk-live-123")
    (tool,) = commit_import(server, petstore, ["updatePetWithForm"])
    seen = {}

    def handler(request):
        seen["type"] = request.headers.get("Content-Type")
        seen["form"] = parse_qs(request.get_data(as_text=True))
        return Response("{}", content_type="application/json")

    httpserver.expect_request("/v2/pets/7", method="POST").respond_with_handler(handler)
    result = run_tool(tool, {"petId": 7, "name": "Rex", "status": "sold"})
    assert result.get("isError") is not True, result
    assert seen["type"].startswith("application/x-www-form-urlencoded")
    assert seen["form"] == {"name": ["Rex"], "status": ["sold"]}


def test_an_imported_postman_request_calls_the_api(server, data, httpserver, loopback_allowed):
    preview = parse_postman(
        data / "weather-desk.postman_collection.json",
        variables={"baseUrl": httpserver.url_for("/v1")},
    )
    Secret.store(server.organization, "WEATHER_DESK_API_KEY", "wd-key")
    (tool,) = commit_import(server, preview, ["forecasts_current_conditions"])
    httpserver.expect_request(
        "/v1/current",
        method="GET",
        query_string={"city": "Lisbon", "units": "metric"},
        headers={"X-Api-Key": "wd-key"},
    ).respond_with_json({"temperature": 19})
    result = run_tool(tool, {"city": "Lisbon", "units": "metric"})
    assert result.get("isError") is not True, result
    assert "19" in result["content"][0]["text"]


def test_a_spec_is_fetched_by_url_through_the_ssrf_guard(data, httpserver, loopback_allowed):
    httpserver.expect_request("/specs/petstore.yaml").respond_with_data(
        (data / "petstore-3.0.yaml").read_text(), content_type="application/yaml"
    )
    preview = parse_openapi(httpserver.url_for("/specs/petstore.yaml"))
    assert preview.find("listPets") is not None


def test_a_spec_url_on_a_private_address_is_refused(data, httpserver, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ""
    httpserver.expect_request("/specs/petstore.yaml").respond_with_data("openapi: 3.0.0")
    with pytest.raises(ImportFailed, match="not allowed"):
        parse_openapi(httpserver.url_for("/specs/petstore.yaml"))
    assert len(httpserver.log) == 0


def test_a_preview_survives_a_round_trip_through_json(server, petstore):
    import orjson

    from integrations.importers import ImportPreview

    kept = orjson.loads(orjson.dumps(petstore.to_dict()))
    restored = ImportPreview.from_dict(kept)
    assert restored.to_dict() == petstore.to_dict()
    (tool,) = commit_import(server, restored, ["deletePet"])
    assert tool.config == petstore.find("deletePet").config
    with pytest.raises(ImportFailed, match="not a preview this importer made"):
        ImportPreview.from_dict({"operations": [{"name": "x"}]})


def test_a_whole_body_argument_is_sent_as_the_body(server, data, httpserver, loopback_allowed):
    import base64
    import json

    document = json.loads((data / "petstore-3.1.json").read_text())
    document["servers"] = [{"url": httpserver.url_for("/clinic/v1")}]
    preview = parse_openapi(document)
    Secret.store(server.organization, "PETSTORE_CLINIC_BASIC_AUTH_USERNAME", "vet")
    Secret.store(server.organization, "PETSTORE_CLINIC_BASIC_AUTH_PASSWORD", "s3cret")
    (tool,) = commit_import(server, preview, ["PUT /vets/{vetId}/notes"])
    credentials = base64.b64encode(b"vet:s3cret").decode()
    httpserver.expect_request(
        "/clinic/v1/vets/v7/notes",
        method="PUT",
        headers={"Authorization": f"Basic {credentials}", "If-Match": "etag-1"},
        json=["limps a little", "likes carrots"],
    ).respond_with_data("", status=204)
    result = run_tool(
        tool, {"vetId": "v7", "If-Match": "etag-1", "body": ["limps a little", "likes carrots"]}
    )
    assert result.get("isError") is not True, result
    assert len(httpserver.log) == 1


def test_an_imported_multipart_operation_sends_its_parts(
    server, data, httpserver, loopback_allowed
):
    import json

    document = json.loads((data / "bookshelf-swagger-2.0.json").read_text())
    document["host"] = f"127.0.0.1:{httpserver.port}"
    document["schemes"] = ["http"]
    preview = parse_openapi(document)
    Secret.store(server.organization, "BOOKSHELF_API_KEY_QUERY", "bk-1")
    (tool,) = commit_import(server, preview, ["uploadCover"])
    seen = {}

    def handler(request):
        seen["args"] = dict(request.args)
        seen["form"] = dict(request.form)
        seen["files"] = {name: (f.filename, f.read()) for name, f in request.files.items()}
        return Response("{}", content_type="application/json")

    httpserver.expect_request("/api/books/978-0441478125/cover", method="PUT").respond_with_handler(
        handler
    )
    result = run_tool(tool, {"isbn": "978-0441478125", "image": "PNGDATA", "credit": "J. Doe"})
    assert result.get("isError") is not True, result
    assert seen["args"] == {"api_key": "bk-1"}
    assert seen["form"] == {"credit": "J. Doe"}
    assert seen["files"] == {"image": ("image", b"PNGDATA")}


def test_imported_tools_on_an_empty_server_are_numbered_from_zero(server, petstore):
    tools = commit_import(server, petstore, ["getPetById", "POST /pets"])
    assert [t.position for t in tools] == [0, 1]  # servers.parts: one 0-based convention
