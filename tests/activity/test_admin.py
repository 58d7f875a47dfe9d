from accounts.models import User


def test_the_admin_shows_the_call_log_read_only(client, server, make_call):
    make_call(server, tool="forecast")
    admin = User.objects.create_superuser("root@example.com", "a long admin passphrase")
    client.force_login(admin)

    listing = client.get("/admin/activity/calllog/")
    assert listing.status_code == 200
    assert "forecast" in listing.content.decode()
    assert client.get("/admin/activity/calllog/add/").status_code == 403
