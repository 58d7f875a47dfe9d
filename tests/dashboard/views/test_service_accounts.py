"""The Service accounts page: admins create one and give it a key; the key list says whom each
key acts as and moves a key to a service account."""

from accounts.models import ApiKey, ServiceAccount


def test_an_admin_creates_a_service_account_and_a_key_for_it(member_client, org):
    created = member_client.post(
        "/service-accounts/", {"name": "Nightly agent", "role": "member"}, follow=True
    )
    assert created.status_code == 200
    assert "Nightly agent" in created.content.decode()
    account = ServiceAccount.objects.get(organization=org, name="Nightly agent")
    page = member_client.post(f"/service-accounts/{account.pk}/keys/new/", {"name": "cron"})
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(organization=org, name="cron")
    assert key.service_account == account


def test_the_key_list_says_whom_each_key_acts_as_and_moves_one(member_client, org, user):
    account = ServiceAccount.objects.create(organization=org, name="CI")
    key, _ = ApiKey.issue(org, "laptop", created_by=user)
    listing = member_client.get("/keys/").content.decode()
    assert "Acts as" in listing and user.email in listing
    moved = member_client.post(
        f"/keys/{key.pk}/transfer/", {"service_account": str(account.pk)}, follow=True
    )
    assert "now acts as service account CI" in moved.content.decode()
    key.refresh_from_db()
    assert key.service_account == account


def test_a_duplicate_name_is_shown_on_the_form(member_client, org):
    ServiceAccount.objects.create(organization=org, name="CI")
    again = member_client.post("/service-accounts/", {"name": "CI", "role": "member"})
    assert again.status_code == 200
    assert "already has a service account" in again.content.decode()
