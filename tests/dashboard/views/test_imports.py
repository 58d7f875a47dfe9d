import json

from servers.models import Tool

SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1.0"},
    "servers": [{"url": "https://pets.example.com"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List pets",
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/pets/{id}": {
            "get": {
                "operationId": "getPet",
                "summary": "Get a pet",
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


def test_pasting_a_spec_previews_then_creates_the_picked_operations(member_client, server):
    url = f"/servers/{server.slug}/import/"
    preview = member_client.post(url, {"step": "preview", "text": json.dumps(SPEC)})
    assert preview.status_code == 200
    names = [op.name for op in preview.context["preview"].operations]
    assert len(names) == 2
    assert not server.tools.exists()
    document = preview.context["document"]

    picked = next(n for n in names if "get" in n.lower() and "pet" in n.lower() and n != names[0])
    response = member_client.post(
        url, {"step": "create", "document": document, "operation": [picked]}
    )
    assert response.status_code == 302
    tool = Tool.objects.get(server=server)
    assert (tool.name, tool.kind, tool.enabled) == (picked, "http", False)


def test_an_unknown_document_is_explained_not_a_500(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/import/", {"step": "preview", "text": "hello: world"}
    )
    assert response.status_code == 400
    assert "not an OpenAPI" in response.context["error"]


def test_a_hand_edited_preview_that_is_not_a_mapping_is_explained_not_a_500(member_client, server):
    for document in ("[]", '"openapi"', "42"):
        response = member_client.post(
            f"/servers/{server.slug}/import/",
            {"step": "create", "document": document, "operation": "listPets"},
        )
        assert response.status_code == 400, document
        assert "mapping at the top level" in response.context["error"]
    assert not server.tools.exists()


def test_nothing_given_is_explained(member_client, server):
    response = member_client.post(f"/servers/{server.slug}/import/", {"step": "preview"})
    assert response.status_code == 400
    assert "Upload a file" in response.context["error"]


def test_a_private_url_is_refused(member_client, server):
    response = member_client.post(
        f"/servers/{server.slug}/import/", {"step": "preview", "url": "http://127.0.0.1:1/x"}
    )
    assert response.status_code == 400
    assert response.context["error"].startswith("url:")


def test_an_outsider_cannot_import_into_my_server(client, outsider, server):
    client.force_login(outsider)
    response = client.post(
        f"/servers/{server.slug}/import/", {"step": "preview", "text": json.dumps(SPEC)}
    )
    assert response.status_code == 404


def test_a_double_submit_of_the_create_step_creates_each_tool_once(member_client, server):
    url = f"/servers/{server.slug}/import/"
    preview = member_client.post(url, {"step": "preview", "text": json.dumps(SPEC)})
    form = {
        "step": "create",
        "document": preview.context["document"],
        "operation": ["listPets", "getPet"],
    }
    first = member_client.post(url, form, follow=True)
    second = member_client.post(url, form, follow=True)
    assert sorted(Tool.objects.filter(server=server).values_list("name", flat=True)) == [
        "getPet",
        "listPets",
    ]
    assert "2 added" in [str(m) for m in first.context["messages"]][0]
    assert (
        "0 added as disabled drafts, 0 updated, 2 unchanged"
        in [str(m) for m in second.context["messages"]][0]
    )


def test_the_preview_says_what_a_second_import_adds_updates_and_removes(member_client, server):
    url = f"/servers/{server.slug}/import/"
    preview = member_client.post(url, {"step": "preview", "text": json.dumps(SPEC)})
    member_client.post(
        url,
        {
            "step": "create",
            "document": preview.context["document"],
            "operation": ["listPets", "getPet"],
        },
    )
    newer = json.loads(json.dumps(SPEC))
    newer["paths"]["/pets"]["get"]["summary"] = "List every pet"
    del newer["paths"]["/pets/{id}"]
    newer["paths"]["/owners"] = {
        "get": {"operationId": "listOwners", "summary": "List owners", "responses": {}}
    }

    again = member_client.post(url, {"step": "preview", "text": json.dumps(newer)})

    page = again.content.decode()
    assert "<strong>1</strong> to add, <strong>1</strong> to update" in page
    assert 'updates <span class="mono">listPets</span> (title, description)' in page
    assert 'No longer in the document: <span class="chip mono">getPet</span>' in page
    member_client.post(
        url,
        {
            "step": "create",
            "document": again.context["document"],
            "operation": ["listPets", "listOwners"],
            "remove_missing": "on",
        },
    )
    assert sorted(Tool.objects.filter(server=server).values_list("name", flat=True)) == [
        "listOwners",
        "listPets",
    ]


def test_an_oauth2_document_proposes_a_provider_the_admin_creates_on_import(member_client, server):
    from connections.models import Provider

    from ...api.views.test_tooling_connections import TRACKER

    url = f"/servers/{server.slug}/import/"
    preview = member_client.post(url, {"step": "preview", "text": json.dumps(TRACKER)})
    assert preview.status_code == 200
    assert b'data-proposed-provider="tracker"' in preview.content
    assert b'name="provider_tracker_client_id"' in preview.content
    names = [op.name for op in preview.context["preview"].operations]
    response = member_client.post(
        url,
        {
            "step": "create",
            "document": preview.context["document"],
            "operation": names,
            "provider_tracker_client_id": "getmcp-app",
            "provider_tracker_client_secret": "s3",
        },
    )
    assert response.status_code == 302
    provider = Provider.objects.get(organization=server.organization, key="tracker")
    assert provider.authorization_url == "https://tracker.example.com/oauth/authorize"
    tool = Tool.objects.get(server=server, name="listIssues")
    assert tool.config["connection"] == {"provider": "tracker", "scopes": ["issues:read"]}
