def test_validation_errors_name_each_field(api, server):
    response = api.patch("/api/servers/weather/", {"slug": "NO", "status": "gone"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"slug", "status"}


def test_nested_field_errors_get_dotted_paths(api, server):
    response = api.post("/api/keys/", {"name": "k", "servers": [["nested"]]}, format="json")
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["servers.0"]


def test_unknown_api_paths_answer_404_in_the_same_shape(api):
    response = api.get("/api/no/such/thing/")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "Not found.", "fields": {}}
    }


def test_a_wrong_method_answers_405_in_the_same_shape(api):
    response = api.delete("/api/organizations/")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_unparseable_json_answers_400_in_the_same_shape(api):
    response = api.post("/api/tokens/", "{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_a_session_without_csrf_token_is_refused_in_the_same_shape(user):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/api/tokens/", {"name": "x"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"


def test_request_bodies_must_be_json(api):
    response = api.post("/api/tokens/", {"name": "x"}, format="multipart")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
