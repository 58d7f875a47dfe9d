from servers.models import Tool

PETSTORE = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1.0"},
    "servers": [{"url": "https://pets.example.com/v1"}],
    "paths": {
        "/pets/{petId}": {
            "get": {
                "operationId": "getPet",
                "summary": "Read a pet",
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "A pet"}},
            }
        },
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List pets",
                "responses": {"200": {"description": "Pets"}},
            }
        },
    },
}


def test_an_openapi_document_is_previewed_without_saving_anything(api, server):
    response = api.post("/api/servers/weather/tools/import-api/preview/", {"document": PETSTORE})
    assert response.status_code == 200, response.json()
    preview = response.json()
    assert preview["format"] == "openapi-3.0"
    assert sorted(op["operation_id"] for op in preview["operations"]) == ["getPet", "listPets"]
    assert server.tools.count() == 1


def test_selected_operations_are_committed_as_draft_http_tools(api, server):
    preview = api.post(
        "/api/servers/weather/tools/import-api/preview/", {"document": PETSTORE}
    ).json()
    response = api.post(
        "/api/servers/weather/tools/import-api/commit/",
        {"preview": preview, "selected": ["getPet"]},
    )
    assert response.status_code == 201, response.json()
    [tool] = response.json()
    assert (tool["kind"], tool["enabled"]) == ("http", False)
    assert Tool.objects.get(pk=tool["id"]).server == server


def test_an_unreadable_document_or_unknown_selection_is_refused(api, server):
    bad = api.post("/api/servers/weather/tools/import-api/preview/", {"document": {"x": 1}})
    assert bad.status_code == 400
    assert list(bad.json()["error"]["fields"]) == ["document"]

    preview = api.post(
        "/api/servers/weather/tools/import-api/preview/", {"document": PETSTORE}
    ).json()
    unknown = api.post(
        "/api/servers/weather/tools/import-api/commit/", {"preview": preview, "selected": ["nope"]}
    )
    assert unknown.status_code == 400
    assert list(unknown.json()["error"]["fields"]) == ["selected"]
    garbage = api.post("/api/servers/weather/tools/import-api/commit/", {"preview": {"a": 1}})
    assert list(garbage.json()["error"]["fields"]) == ["preview"]


def test_a_test_run_reports_the_tools_result(api, server):
    tool = server.tools.get()
    response = api.post(
        f"/api/servers/weather/tools/{tool.pk}/test/", {"arguments": {"message": "hi"}}
    )
    assert response.status_code == 200, response.json()
    report = response.json()
    assert report["result"]["content"] == [{"type": "text", "text": "You said hi"}]
    assert report["timing"]["totalMs"] >= 0


def test_a_test_run_with_bad_arguments_reports_the_error(api, server):
    tool = server.tools.get()
    response = api.post(
        f"/api/servers/weather/tools/{tool.pk}/test/", {"arguments": {"message": 42}}
    )
    assert response.status_code == 200
    report = response.json()
    assert "error" in report or report["result"].get("isError")


def test_an_outsider_can_neither_import_into_nor_test_anothers_server(outsider_api, server):
    tool = server.tools.get()
    base = "/api/servers/weather/tools"
    assert outsider_api.post(f"{base}/{tool.pk}/test/", {}).status_code == 404
    assert (
        outsider_api.post(f"{base}/import-api/preview/", {"document": PETSTORE}).status_code == 404
    )
    assert outsider_api.post(f"{base}/import-api/commit/", {"preview": {}}).status_code == 404


def _teamwork() -> dict:
    from pathlib import Path

    import yaml

    data = Path(__file__).resolve().parents[2] / "integrations" / "importers" / "data"
    return yaml.safe_load((data / "teamwork-openapi-3.0.yaml").read_text())


def test_a_double_commit_of_one_import_yields_one_set_of_tools(api, server):
    preview = api.post(
        "/api/servers/weather/tools/import-api/preview/", {"document": _teamwork()}
    ).json()
    assert len(preview["changes"]["added"]) == 45

    first = api.post("/api/servers/weather/tools/import-api/commit/", {"preview": preview})
    second = api.post("/api/servers/weather/tools/import-api/commit/", {"preview": preview})

    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    assert server.tools.filter(kind="http").count() == 45
    assert not server.tools.filter(name__endswith="_2").exists()


def test_the_preview_of_a_newer_document_lists_added_changed_and_removed(api, server):
    document = _teamwork()
    preview = api.post("/api/servers/weather/tools/import-api/preview/", {"document": document})
    api.post("/api/servers/weather/tools/import-api/commit/", {"preview": preview.json()})
    document["paths"]["/users"]["get"]["summary"] = "List every user"
    del document["paths"]["/search"]
    document["paths"]["/audit-log"] = {
        "get": {"operationId": "listAuditEvents", "summary": "List audit events", "responses": {}}
    }

    changes = api.post(
        "/api/servers/weather/tools/import-api/preview/", {"document": document}
    ).json()["changes"]

    assert [c["name"] for c in changes["added"]] == ["listAuditEvents"]
    assert [(c["name"], c["fields"]) for c in changes["changed"]] == [
        ("listUsers", ["title", "description"])
    ]
    assert [c["name"] for c in changes["removed"]] == ["search"]
    assert len(changes["unchanged"]) == 43
    assert server.tools.get(name="listUsers").title == "List users"


def test_a_hand_edited_preview_whose_template_reads_an_unknown_name_is_refused(api, server):
    preview = api.post(
        "/api/servers/weather/tools/import-api/preview/", {"document": PETSTORE}
    ).json()
    get_pet = next(op for op in preview["operations"] if op["operation_id"] == "getPet")
    get_pet["config"]["headers"]["X-Pet"] = "{{ petid }}"

    response = api.post(
        "/api/servers/weather/tools/import-api/commit/",
        {"preview": preview, "selected": ["getPet"]},
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"]["selected"] == [
        "GET /pets/{petId}: fix its problems first"
    ]
    assert not server.tools.filter(kind="http").exists()
