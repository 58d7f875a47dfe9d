from vault.models import Secret


def test_setting_a_secret_stores_it_encrypted_and_never_shows_it(member_client, org):
    response = member_client.post(
        "/secrets/", {"name": "API_TOKEN", "value": "s3cr3t-value", "test_value": "test-only-9f2"}
    )
    assert response.status_code == 302
    secret = Secret.objects.get(organization=org, name="API_TOKEN")
    assert "s3cr3t-value" not in secret.ciphertext
    assert secret.reveal() == "s3cr3t-value"
    assert secret.reveal(test=True) == "test-only-9f2"
    page = member_client.get("/secrets/").content.decode()
    assert "API_TOKEN" in page and "s3cr3t-value" not in page and "test-only-9f2" not in page


def test_setting_the_same_name_replaces_the_value(member_client, org):
    member_client.post("/secrets/", {"name": "TOKEN", "value": "one"})
    member_client.post("/secrets/", {"name": "TOKEN", "value": "two"})
    assert Secret.objects.get(organization=org, name="TOKEN").reveal() == "two"


def test_a_bad_name_is_reported_next_to_the_field(member_client):
    response = member_client.post("/secrets/", {"name": "1 bad", "value": "x"})
    assert response.status_code == 400
    assert "name" in response.context["form"].errors


def test_secrets_that_tools_need_but_nobody_set_are_listed(member_client, server):
    server.tools.create(
        name="api",
        description="d",
        input_schema={"type": "object"},
        kind="http",
        config={
            "url": "https://x.example",
            "auth": {"type": "bearer", "token": "{{ secrets.PETS_TOKEN }}"},
        },
    )
    assert member_client.get("/secrets/").context["missing"] == ["PETS_TOKEN"]


def test_a_secret_can_be_scoped_to_my_server_only(member_client, org, server, outsider_server):
    member_client.post("/secrets/", {"name": "T", "value": "v", "server": server.pk})
    assert Secret.objects.get(organization=org, name="T").server == server
    response = member_client.post(
        "/secrets/", {"name": "U", "value": "v", "server": outsider_server.pk}
    )
    assert "server" in response.context["form"].errors


def test_deleting_and_the_outsider(member_client, org, outsider_org):
    mine = Secret.store(org, "MINE", "v")
    theirs = Secret.store(outsider_org, "THEIRS", "v")
    assert "THEIRS" not in member_client.get("/secrets/").content.decode()
    assert member_client.post(f"/secrets/{theirs.pk}/delete/").status_code == 404
    member_client.post(f"/secrets/{mine.pk}/delete/")
    assert not Secret.objects.filter(pk=mine.pk).exists()
    assert Secret.objects.filter(pk=theirs.pk).exists()
