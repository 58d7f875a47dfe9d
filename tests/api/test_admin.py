from accounts.models import User
from api.models import PersonalAccessToken


def test_the_admin_lists_and_revokes_tokens_without_showing_digests(client, user):
    admin = User.objects.create_superuser("root@example.com", "a long admin passphrase")
    token, _ = PersonalAccessToken.issue(user, "laptop")
    client.force_login(admin)

    listing = client.get("/admin/api/personalaccesstoken/")
    assert listing.status_code == 200
    assert token.prefix in listing.content.decode()
    assert (
        token.digest
        not in client.get(f"/admin/api/personalaccesstoken/{token.pk}/change/").content.decode()
    )

    client.post(
        "/admin/api/personalaccesstoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    token.refresh_from_db()
    assert not token.is_active
