import json


def check(client, body, **params):
    query = "?object=0" if params.get("anything") else ""
    response = client.post(f"/schema/check/{query}", body, content_type="application/json")
    assert response.status_code == 200
    return response.json()


def test_a_valid_object_schema_passes(member_client):
    assert check(member_client, json.dumps({"type": "object", "properties": {}})) == {
        "valid": True,
        "errors": [],
    }


def test_a_schema_error_names_its_path(member_client):
    result = check(member_client, json.dumps({"type": "object", "properties": {"a": {"type": 5}}}))
    assert not result["valid"]
    assert result["errors"][0]["path"].startswith("properties.a")


def test_broken_json_names_line_and_column(member_client):
    result = check(member_client, '{"type": \n  "object",,}')
    assert "line 2" in result["errors"][0]["message"]


def test_an_input_schema_must_be_an_object_schema(member_client):
    assert not check(member_client, json.dumps({"type": "string"}))["valid"]
    assert check(member_client, json.dumps({"type": "string"}), anything=True)["valid"]


def test_the_check_needs_a_login_and_csrf(client, user):
    assert client.post("/schema/check/", "{}", content_type="application/json").status_code == 302
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post("/schema/check/", "{}", content_type="application/json").status_code == 403
