"""Admins configure single sign-on in the dashboard and the API; the client secret is encrypted,
write-only and masked everywhere; every change is an audit row without the secret."""

import pytest
from django.urls import reverse

from accounts.models import Membership
from audit.models import AuditEvent
from sso.models import Connection
from sso.sessions import mark_sso_sign_in
from tests.api.conftest import client_for
from tests.sso.conftest import member

pytestmark = pytest.mark.django_db
SECRET = "very-secret-client-value"
BODY = {
    "issuer": "https://idp.corp.example/oauth2/default",
    "client_id": "0oa1b2c3",
    "client_secret": SECRET,
    "allowed_domains": ["Corp.example", "@corp-eu.example"],
    "default_role": "member",
    "role_mapping": {"platform-admins": "admin"},
    "required": True,
}


def url(org):
    return reverse("organization-sso", kwargs={"slug": org.slug})


def test_an_admin_configures_sso_through_the_api_and_never_sees_the_secret(org):
    admin = member(org, "root@corp.example", Membership.ADMIN)
    api = client_for(admin)

    assert api.get(url(org)).json()["configured"] is False
    created = api.put(url(org), BODY, format="json")

    assert created.status_code == 201, created.content
    answer = created.json()
    assert answer["allowed_domains"] == ["corp-eu.example", "corp.example"]
    assert answer["client_secret_set"] is True and SECRET not in created.content.decode()
    assert answer["redirect_uri"].endswith("/sso/callback/")
    stored = Connection.objects.get(organization=org)
    assert SECRET not in stored.client_secret_ciphertext and stored.client_secret() == SECRET

    patched = api.patch(url(org), {"required": False, "client_secret": ""}, format="json")
    assert patched.json()["required"] is False
    assert Connection.objects.get(organization=org).client_secret() == SECRET  # empty keeps it
    assert SECRET not in api.get(url(org)).content.decode()

    assert api.delete(url(org)).status_code == 204
    assert not Connection.objects.filter(organization=org).exists()
    actions = list(
        AuditEvent.objects.filter(organization_id=org.pk, action__startswith="sso.")
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == ["sso.config_create", "sso.config_update", "sso.config_delete"]
    assert not AuditEvent.objects.filter(diff__icontains=SECRET).exists()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"role_mapping": {"x": "owner"}}, "role_mapping"),
        ({"default_role": "owner"}, "default_role"),
        ({"allowed_domains": ["not a domain"]}, "allowed_domains"),
        ({"allowed_domains": []}, "allowed_domains"),
        ({"issuer": "ftp://idp.example"}, "issuer"),
    ],
)
def test_the_api_refuses_what_sso_must_not_be_configured_with(org, change, field):
    api = client_for(member(org, "root@corp.example", Membership.ADMIN))
    response = api.put(url(org), {**BODY, **change}, format="json")
    assert response.status_code == 400
    assert any(name.startswith(field) for name in response.json()["error"]["fields"])


def test_members_may_not_configure_sso(org):
    api = client_for(member(org, "dev@corp.example", Membership.MEMBER))
    assert api.put(url(org), BODY, format="json").status_code == 403
    assert not Connection.objects.filter(organization=org).exists()


def test_an_admin_configures_sso_on_the_dashboard_page_and_the_secret_stays_masked(client, org):
    admin = member(org, "root@corp.example", Membership.ADMIN)
    client.force_login(admin)
    session = client.session
    session["current_org_id"] = org.pk
    # Signed in through SSO: a password session would end as "SSO required" goes on
    # (tests/sso/test_sessions.py).
    mark_sso_sign_in(session, org)
    session.save()
    form = {
        "issuer": BODY["issuer"],
        "client_id": BODY["client_id"],
        "client_secret": SECRET,
        "allowed_domains": "corp.example corp-eu.example",
        "default_role": "viewer",
        "groups_claim": "groups",
        "role_mapping": "platform-admins = admin\nengineering = member",
        "required": "on",
        "enabled": "on",
    }

    response = client.post(reverse("sso:settings"), form)

    assert response.status_code == 302
    stored = Connection.objects.get(organization=org)
    assert stored.role_mapping == {"platform-admins": "admin", "engineering": "member"}
    assert stored.required and stored.default_role == "viewer"
    page = client.get(reverse("sso:settings")).content.decode()
    assert SECRET not in page and "saved. Leave empty to keep it." in page
    assert "/sso/callback/" in page

    client.post(reverse("sso:settings"), {**form, "client_secret": "", "required": ""})
    assert Connection.objects.get(organization=org).client_secret() == SECRET
    assert not Connection.objects.get(organization=org).required

    bad = client.post(reverse("sso:settings"), {**form, "role_mapping": "root = owner"})
    assert bad.status_code == 400 and "not one of" in bad.content.decode()
