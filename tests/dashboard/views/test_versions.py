from servers.models import ServerVersion


def test_an_unpublished_server_says_edits_are_live(member_client, server, tool):
    page = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert "Edits are live at once" in page


def test_publishing_then_editing_shows_the_pending_changes(member_client, server, tool):
    response = member_client.post(f"/servers/{server.slug}/versions/", {"version": ""})
    assert response.status_code == 302
    assert ServerVersion.objects.get(server=server).version == "1.0.0"

    tool.description = "A better description"
    tool.save()
    detail = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert "Unpublished changes" in detail
    assert "1 change goes live when you publish" in detail
    versions = member_client.get(f"/servers/{server.slug}/versions/")
    assert any("echo" in line for line in versions.context["changes"])

    member_client.post(f"/servers/{server.slug}/versions/", {"version": "1.1.0"})
    assert set(server.versions.values_list("version", flat=True)) == {"1.0.0", "1.1.0"}
    assert (
        "Unpublished changes" not in member_client.get(f"/servers/{server.slug}/").content.decode()
    )


def test_a_bad_or_taken_version_is_shown_next_to_the_field(member_client, server, tool):
    member_client.post(f"/servers/{server.slug}/versions/", {"version": "2.0.0"})
    response = member_client.post(f"/servers/{server.slug}/versions/", {"version": "2.0.0"})
    assert response.status_code == 400
    assert "already published" in response.context["error"]
    response = member_client.post(f"/servers/{server.slug}/versions/", {"version": "two"})
    assert "semantic version" in response.context["error"]


def test_rollback_serves_the_old_definition_as_a_new_version(member_client, server, tool):
    member_client.post(f"/servers/{server.slug}/versions/", {"version": "1.0.0"})
    tool.description = "Changed"
    tool.save()
    member_client.post(f"/servers/{server.slug}/versions/", {"version": "1.0.1"})
    member_client.post(f"/servers/{server.slug}/versions/1.0.0/rollback/")
    tool = server.tools.get(name="echo")
    assert tool.description == "Echo a message back."
    assert server.versions.filter(version="1.0.2").exists()


def test_an_outsider_cannot_publish(client, outsider, server):
    client.force_login(outsider)
    assert client.post(f"/servers/{server.slug}/versions/").status_code == 404
    assert not server.versions.exists()


def test_edits_after_a_publish_say_they_wait_for_the_next_one(member_client, server, tool):
    member_client.post(f"/servers/{server.slug}/versions/", {"version": "1.0.0"})
    response = member_client.post(f"/servers/{server.slug}/tools/{tool.pk}/toggle/", follow=True)
    assert "Publish a new version to make it live." in response.content.decode()


def test_the_banner_counts_several_pending_changes_in_the_plural(member_client, server, tool):
    member_client.post(f"/servers/{server.slug}/versions/", {"version": ""})
    tool.description = "Changed"
    tool.save()
    server.tools.create(
        name="second", description="Another", input_schema={"type": "object"}, config={}
    )
    detail = member_client.get(f"/servers/{server.slug}/").content.decode()
    assert "2 changes go live when you publish" in detail


def test_a_live_setting_changed_after_a_publish_is_not_listed_as_waiting_for_one(
    member_client, server, tool
):
    member_client.post(f"/servers/{server.slug}/versions/", {"version": "1.0.0"})
    server.auth_mode = "api_key+oauth"
    server.rate_limit_per_minute = 120
    server.save()

    versions = member_client.get(f"/servers/{server.slug}/versions/")
    detail = member_client.get(f"/servers/{server.slug}/").content.decode()

    assert versions.context["changes"] == []
    assert "Unpublished changes" not in detail
    tool.description = "Changed"
    tool.save()
    changes = member_client.get(f"/servers/{server.slug}/versions/").context["changes"]
    assert changes == ["tool changed: echo (description)"]
