from vault.models import Secret


def test_a_secret_is_created_listed_replaced_and_deleted_without_its_value_showing(
    api, org, server
):
    created = api.post(
        "/api/secrets/",
        {"name": "WEATHER_TOKEN", "value": "s3cr3t-live", "testValue": "s3cr3t-test"},
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["hasTestValue"] is True and body["server"] is None
    secret = Secret.objects.get(pk=body["id"])
    assert secret.reveal() == "s3cr3t-live" and secret.reveal(test=True) == "s3cr3t-test"

    for url in ("/api/secrets/", f"/api/secrets/{secret.pk}/"):
        text = api.get(url).content.decode()
        assert "s3cr3t" not in text and "WEATHER_TOKEN" in text

    replaced = api.patch(f"/api/secrets/{secret.pk}/", {"value": "rotated", "testValue": None})
    assert replaced.status_code == 200
    assert "rotated" not in replaced.content.decode()
    secret.refresh_from_db()
    assert secret.reveal() == "rotated" and secret.test_ciphertext is None

    assert api.delete(f"/api/secrets/{secret.pk}/").status_code == 204
    assert not Secret.objects.filter(pk=secret.pk).exists()


def test_a_secret_for_one_server_names_it_by_slug(api, server):
    response = api.post("/api/secrets/", {"name": "K", "value": "v", "server": "weather"})
    assert response.status_code == 201
    assert response.json()["server"] == "weather"
    assert Secret.objects.get(organization=server.organization).server == server


def test_a_secret_cannot_name_another_organizations_server(api, outsider_server):
    response = api.post("/api/secrets/", {"name": "K", "value": "v", "server": "secret-plans"})
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["server"]


def test_a_secret_needs_a_value_and_a_valid_unique_name(api, org):
    assert list(api.post("/api/secrets/", {"name": "K"}).json()["error"]["fields"]) == ["value"]
    bad = api.post("/api/secrets/", {"name": "9lives", "value": "v"})
    assert list(bad.json()["error"]["fields"]) == ["name"]
    api.post("/api/secrets/", {"name": "K", "value": "v"})
    again = api.post("/api/secrets/", {"name": "K", "value": "w"})
    assert again.status_code == 400
    assert list(again.json()["error"]["fields"]) == ["name"]


def test_a_secrets_name_and_scope_cannot_change(api, org):
    secret = Secret.store(org, "K", "v")
    api.patch(f"/api/secrets/{secret.pk}/", {"name": "OTHER"})
    secret.refresh_from_db()
    assert secret.name == "K"
