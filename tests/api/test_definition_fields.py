from api.definition_fields import field_errors


def test_definition_messages_land_on_their_top_field_with_the_rest_of_their_path():
    errors = [
        "tools[1].inputSchema.type: must be 'object'",
        "tools[1].name: required",
        "tools[10].name: required",
        "tools[1]: must be a mapping",
        "slug: already taken",
    ]
    assert field_errors(errors, "tools[1]") == {
        "inputSchema": ["type: must be 'object'"],
        "name": ["required"],
        "non_field_errors": ["must be a mapping"],
    }
    assert field_errors(["tools[0].config.steps[2]: unknown step"], "") == {
        "tools": ["[0].config.steps[2]: unknown step"]
    }


def test_a_tool_saved_with_a_loopback_url_comes_back_with_a_warning_that_says_how_to_allow_it(
    api, server, settings
):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    settings.OUTBOUND_ALLOW_LOOPBACK = False
    local = {
        "name": "local",
        "description": "A service on this machine.",
        "inputSchema": {"type": "object"},
        "kind": "http",
        "config": {"method": "GET", "url": "http://localhost:8080/status"},
    }
    created = api.post("/api/servers/weather/tools/", local, format="json")
    assert created.status_code == 201, created.json()
    (warning,) = created.json()["warnings"]
    assert warning.startswith("config.url: localhost (127.0.0.1) is a loopback address")
    assert "OUTBOUND_ALLOWED_NETWORKS" in warning and "OUTBOUND_ALLOW_LOOPBACK" in warning
    listed = api.get("/api/servers/weather/tools/").json()["results"]
    assert {row["name"]: row["warnings"] for row in listed} == {
        "echo": [],
        "local": [warning],
    }
    public = {"config": {"method": "GET", "url": "https://api.example.com/status"}}
    patched = api.patch(f"/api/servers/weather/tools/{created.json()['id']}/", public)
    assert patched.status_code == 200 and patched.json()["warnings"] == []
