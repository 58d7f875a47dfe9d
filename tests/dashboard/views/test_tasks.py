"""A server's Tasks page: listed with who started them, filtered by status, cancelled by a
member, and invisible to anyone outside the organization."""

from datetime import timedelta

from django.utils import timezone

from accounts.models import ApiKey
from mcptasks.models import Task


def make_task(server, credential="anon", status=Task.WORKING, tool="slow", **extra):
    return Task.objects.create(
        organization=server.organization,
        server=server,
        credential=credential,
        tool_name=tool,
        status=status,
        ttl_ms=3_600_000,
        expires_at=extra.pop("expires_at", timezone.now() + timedelta(hours=1)),
        **extra,
    )


def test_the_tasks_page_lists_tasks_with_who_started_them(member_client, user, server):
    key, _ = ApiKey.issue(server.organization, "Claude laptop", created_by=user)
    mine = make_task(server, credential=f"key:{key.pk}", tool="export_report")
    make_task(server, status=Task.COMPLETED, tool="quick")
    response = member_client.get(f"/servers/{server.slug}/tasks/")
    assert response.status_code == 200
    page = response.content.decode()
    row = page.split(f'data-task="{mine.id}"', 1)[1].split("</tr>", 1)[0]
    assert "export_report" in row and "Claude laptop" in row and user.email in row
    assert "Working" in row and "Cancel" in row
    assert "Anonymous client" in page
    assert "Completed" in page


def test_tasks_are_filtered_by_status(member_client, server):
    make_task(server, tool="still_running")
    make_task(server, status=Task.FAILED, tool="broke")
    make_task(server, status=Task.INPUT_REQUIRED, tool="asks_user")
    failed = member_client.get(f"/servers/{server.slug}/tasks/?status=failed").content.decode()
    assert "broke" in failed and "still_running" not in failed and "asks_user" not in failed
    active = member_client.get(f"/servers/{server.slug}/tasks/?status=active").content.decode()
    assert "still_running" in active and "asks_user" in active and "broke" not in active


def test_expired_tasks_and_other_servers_tasks_are_not_listed(member_client, org, server):
    from servers.models import Server

    other = Server.objects.create(organization=org, slug="other-one", name="Other")
    make_task(other, tool="elsewhere")
    make_task(server, tool="gone", expires_at=timezone.now() - timedelta(seconds=1))
    page = member_client.get(f"/servers/{server.slug}/tasks/").content.decode()
    assert "elsewhere" not in page and "gone" not in page
    assert "No tasks yet" in page


def test_a_member_cancels_a_running_task(member_client, server):
    task = make_task(server)
    response = member_client.post(f"/servers/{server.slug}/tasks/{task.id}/cancel/")
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.status == Task.CANCELLED
    assert task.cancel_requested
    # What the task's client reads in tasks/get says where the cancel came from.
    assert task.status_message == "Cancelled from the dashboard."


def test_cancelling_a_finished_task_changes_nothing(member_client, server):
    task = make_task(server, status=Task.COMPLETED, result={"content": []})
    response = member_client.post(f"/servers/{server.slug}/tasks/{task.id}/cancel/", follow=True)
    task.refresh_from_db()
    assert task.status == Task.COMPLETED
    assert "had already ended" in response.content.decode()


def test_cancelling_needs_a_post(member_client, server):
    task = make_task(server)
    assert member_client.get(f"/servers/{server.slug}/tasks/{task.id}/cancel/").status_code == 405


def test_an_outsider_gets_404_for_the_page_and_the_cancel(client, outsider, server):
    task = make_task(server)
    client.force_login(outsider)
    assert client.get(f"/servers/{server.slug}/tasks/").status_code == 404
    assert client.post(f"/servers/{server.slug}/tasks/{task.id}/cancel/").status_code == 404
    task.refresh_from_db()
    assert task.status == Task.WORKING


def test_a_task_cannot_be_cancelled_through_another_server_of_the_same_member(
    member_client, org, server, outsider_server
):
    from servers.models import Server

    other = Server.objects.create(organization=org, slug="mine-too", name="Mine too")
    task = make_task(outsider_server)
    assert member_client.post(f"/servers/{other.slug}/tasks/{task.id}/cancel/").status_code == 404
    task.refresh_from_db()
    assert task.status == Task.WORKING
