"""The Provisioning page (dashboard/views/scim.py): the SCIM token is shown once and only its
digest kept, rotating replaces it, and the role mapping is saved and applied."""

from accounts.models import Membership, User, digest_key
from scim import tokens
from scim.models import Directory, ScimUser


def test_the_token_is_shown_once_and_only_its_digest_is_kept(member_client, org):
    assert member_client.get("/organization/scim/").status_code == 200
    page = member_client.post("/organization/scim/token/").content.decode()
    raw = page.split("data-scim-token>")[1].split("<")[0]
    assert raw.startswith("gscim_")
    directory = Directory.objects.get(organization=org)
    assert directory.token_digest == digest_key(raw)
    assert raw not in member_client.get("/organization/scim/").content.decode()
    assert tokens.authenticate(f"Bearer {raw}") == directory

    rotated = member_client.post("/organization/scim/token/").content.decode()
    assert rotated.split("data-scim-token>")[1].split("<")[0] != raw
    assert tokens.authenticate(f"Bearer {raw}") is None
    member_client.post("/organization/scim/token/revoke/")
    directory.refresh_from_db()
    assert directory.token_digest is None


def test_the_mapping_is_saved_and_provisioned_people_follow_it(member_client, org):
    person = User.objects.create_user("p@example.com", None)
    Membership.objects.create(organization=org, user=person, role="member")
    ScimUser.objects.create(organization=org, user=person, user_name="p@example.com")
    saved = member_client.post(
        "/organization/scim/", {"default_role": "viewer", "group_roles": "Eng = admin\n\n"}
    )
    assert saved.status_code == 302
    directory = Directory.objects.get(organization=org)
    assert (directory.default_role, directory.group_roles) == ("viewer", {"Eng": "admin"})
    assert Membership.objects.get(organization=org, user=person).role == "viewer"
    bad = member_client.post(
        "/organization/scim/", {"default_role": "viewer", "group_roles": "Eng"}
    )
    assert bad.status_code == 400
    wrong_role = member_client.post(
        "/organization/scim/", {"default_role": "member", "group_roles": "Eng = owner"}
    )
    assert wrong_role.status_code == 400
    assert Directory.objects.get(organization=org).group_roles == {"Eng": "admin"}
