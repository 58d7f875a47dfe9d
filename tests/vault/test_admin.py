from vault.admin import SecretForm
from vault.models import Secret


def test_the_admin_form_writes_values_and_never_renders_them(org):
    form = SecretForm(
        data={
            "organization": org.pk,
            "name": "TOKEN",
            "value": "v-123456",
            "test_value": "t-123456",
        }
    )
    assert form.is_valid(), form.errors
    secret = form.save()
    assert secret.reveal() == "v-123456" and secret.reveal(test=True) == "t-123456"
    html = str(SecretForm(instance=secret))
    assert "v-123456" not in html and "t-123456" not in html
    assert secret.ciphertext not in html


def test_an_empty_value_on_edit_keeps_the_current_one(org):
    secret = Secret.store(org, "TOKEN", "keep-me")
    form = SecretForm(instance=secret, data={"organization": org.pk, "name": "TOKEN", "value": ""})
    assert form.is_valid(), form.errors
    assert form.save().reveal() == "keep-me"


def test_a_new_secret_needs_a_value(org):
    form = SecretForm(data={"organization": org.pk, "name": "TOKEN", "value": ""})
    assert not form.is_valid()
    assert "value" in form.errors


def test_staff_can_open_the_secret_and_allowance_pages(client, org, django_user_model):
    admin = django_user_model.objects.create_superuser("root@example.com", "a long admin password")
    client.force_login(admin)
    secret = Secret.store(org, "TOKEN", "never-in-html")
    page = client.get(f"/admin/vault/secret/{secret.pk}/change/")
    assert page.status_code == 200
    assert b"never-in-html" not in page.content
    assert client.get("/admin/vault/networkallowance/add/").status_code == 200
