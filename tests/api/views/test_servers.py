from servers.models import Server, ServerVersion, Tool

from ..conftest import ECHO


def test_servers_are_listed_created_read_updated_and_deleted(api, org, server):
    listing = api.get("/api/servers/").json()
    assert [s["slug"] for s in listing["results"]] == ["weather"]

    created = api.post(
        "/api/servers/",
        {
            "slug": "files",
            "name": "files",
            "title": "Files",
            "allowedOrigins": ["https://a.example"],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["organization"], body["auth"], body["status"], body["version"]) == (
        org.slug,
        "api_key",
        "active",
        "1.0.0",
    )
    assert Server.objects.get(slug="files").allowed_origins == ["https://a.example"]

    patched = api.patch("/api/servers/files/", {"status": "paused", "auth": "none"}, format="json")
    assert patched.status_code == 200
    assert (patched.json()["status"], patched.json()["auth"]) == ("paused", "none")

    put = api.put("/api/servers/files/", {"slug": "files-2", "name": "Files two"}, format="json")
    assert put.status_code == 200
    assert api.get("/api/servers/files-2/").json()["name"] == "Files two"

    assert api.delete("/api/servers/files-2/").status_code == 204
    assert not Server.objects.filter(slug="files-2").exists()


def test_server_writes_follow_the_definition_rules(api, org):
    response = api.post(
        "/api/servers/",
        {"slug": "x", "name": "n", "auth": "password", "allowedOrigins": ["nope"]},
        format="json",
    )
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert set(fields) == {"slug", "auth", "allowedOrigins"}
    assert fields["allowedOrigins"] == ["[0]: must be an origin like https://app.example.com"]


def test_a_server_can_be_created_with_oauth(api, org):
    response = api.post(
        "/api/servers/", {"slug": "with-oauth", "name": "n", "auth": "api_key+oauth"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["auth"] == "api_key+oauth"


def test_a_slug_taken_by_any_organization_is_refused(api, outsider_server):
    response = api.post("/api/servers/", {"slug": "secret-plans", "name": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"slug": ["already taken"]}


def test_a_server_is_created_in_another_of_my_organizations_on_request(api, user, outsider_org):
    outsider_org.memberships.create(user=user, role="admin")
    response = api.post(
        "/api/servers/",
        {"slug": "shared", "name": "s", "organization": outsider_org.slug},
        format="json",
    )
    assert response.status_code == 201
    assert Server.objects.get(slug="shared").organization == outsider_org
    moved = api.patch("/api/servers/shared/", {"organization": user.personal_organization().slug})
    assert moved.status_code == 400
    assert moved.json()["error"]["fields"] == {"organization": ["cannot be changed"]}


def test_a_server_cannot_be_created_in_an_organization_i_am_not_in(api, outsider_org):
    response = api.post(
        "/api/servers/",
        {"slug": "sneaky", "name": "s", "organization": outsider_org.slug},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["organization"]
    assert not Server.objects.filter(slug="sneaky").exists()


def test_the_export_is_the_server_as_code_definition(api, server):
    definition = api.get("/api/servers/weather/export/").json()
    assert definition["slug"] == "weather"
    assert [t["name"] for t in definition["tools"]] == ["echo"]
    assert [p["name"] for p in definition["prompts"]] == ["greet"]


def test_an_exported_definition_imports_as_a_new_server(api, server, org):
    definition = api.get("/api/servers/weather/export/").json()
    response = api.post("/api/servers/import/", {**definition, "slug": "weather-2"}, format="json")
    assert response.status_code == 201, response.json()
    copy = Server.objects.get(slug="weather-2")
    assert copy.organization == org
    assert list(copy.tools.values_list("name", flat=True)) == ["echo"]


def test_an_import_replaces_a_server_only_when_asked(api, server):
    definition = {"slug": "weather", "name": "weather", "tools": [{**ECHO, "name": "shout"}]}
    refused = api.post("/api/servers/import/", definition, format="json")
    assert refused.status_code == 400
    assert list(refused.json()["error"]["fields"]) == ["slug"]

    replaced = api.post("/api/servers/import/?replace=true", definition, format="json")
    assert replaced.status_code == 200
    assert list(Tool.objects.filter(server=server).values_list("name", flat=True)) == ["shout"]


def test_an_invalid_definition_is_refused_naming_its_fields(api, org):
    response = api.post(
        "/api/servers/import/",
        {"slug": "bad", "name": "bad", "tools": [{"name": "t", "inputSchema": {"type": "string"}}]},
        format="json",
    )
    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert "[0].description: required" in fields["tools"]
    assert "[0].inputSchema.type: must be 'object'" in fields["tools"]
    assert not Server.objects.filter(slug="bad").exists()


def test_an_import_into_an_organization_i_am_not_in_is_refused(api, outsider_org):
    response = api.post(
        f"/api/servers/import/?organization={outsider_org.slug}",
        {"slug": "sneaky", "name": "s"},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["organization"]


def test_an_import_by_someone_at_the_organization_cap_with_none_left_is_a_clean_error(
    api, user, settings
):
    from accounts.models import Membership

    settings.ORGANIZATIONS_PER_PERSON = 1
    personal = user.personal_organization()
    # Staff removed them from the one organization they pay for: a new personal one would be
    # over the cap, and there is none of their own to fall back on.
    Membership.objects.filter(organization=personal, user=user).delete()
    response = api.post("/api/servers/import/", {"slug": "capped", "name": "c"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "ORGANIZATIONS_PER_PERSON" in response.json()["error"]["fields"]["organization"][0]
    assert not Server.objects.filter(slug="capped").exists()


def test_publishing_lists_and_reads_versions(api, server):
    first = api.post("/api/servers/weather/versions/", {}, format="json")
    assert first.status_code == 201
    assert first.json()["version"] == "1.0.0"
    assert first.json()["definition"]["tools"][0]["name"] == "echo"
    second = api.post("/api/servers/weather/versions/", {"version": "2.0.0"}, format="json")
    assert second.status_code == 201

    listing = api.get("/api/servers/weather/versions/").json()
    assert [v["version"] for v in listing["results"]] == ["2.0.0", "1.0.0"]
    detail = api.get("/api/servers/weather/versions/1.0.0/").json()
    assert detail["definition"]["version"] == "1.0.0"
    assert api.get("/api/servers/weather/versions/9.9.9/").status_code == 404


def test_publishing_a_taken_or_malformed_version_is_refused(api, server):
    api.post("/api/servers/weather/versions/", {"version": "1.0.0"}, format="json")
    for version in ("1.0.0", "one"):
        response = api.post("/api/servers/weather/versions/", {"version": version}, format="json")
        assert response.status_code == 400
        assert list(response.json()["error"]["fields"]) == ["version"]


def test_a_rollback_publishes_the_old_definition_again(api, server):
    api.post("/api/servers/weather/versions/", {}, format="json")
    Tool.objects.filter(server=server).update(description="Changed.")
    api.post("/api/servers/weather/versions/", {}, format="json")

    response = api.post("/api/servers/weather/rollback/", {"version": "1.0.0"}, format="json")
    assert response.status_code == 201
    assert response.json()["version"] == "1.0.2"
    assert Tool.objects.get(server=server).description == "Echo a message back."
    assert ServerVersion.objects.filter(server=server).count() == 3
    missing = api.post("/api/servers/weather/rollback/", {"version": "7.0.0"}, format="json")
    assert missing.status_code == 400


def test_importing_a_definition_with_a_template_typo_is_refused(api):
    definition = {
        "slug": "typo",
        "name": "typo",
        "tools": [
            {
                "name": "greet",
                "description": "Greet.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "config": {"content": [{"type": "text", "text": "hi {{ nmae }}!"}]},
            }
        ],
    }
    response = api.post("/api/servers/import/", definition, format="json")
    assert response.status_code == 400
    assert "reads 'nmae'" in str(response.json()["error"]["fields"])
    assert not Server.objects.filter(slug="typo").exists()


def test_publishing_a_draft_saved_before_the_template_check_warns_but_publishes(api, server):
    server.tools.update(config={"content": [{"type": "text", "text": "You said {{ msg }}"}]})
    response = api.post(f"/api/servers/{server.slug}/versions/", {}, format="json")
    assert response.status_code == 201, response.json()
    [warning] = response.json()["warnings"]
    assert warning.startswith("tools[0].config.content[0].text: the template reads 'msg'")
