"""accounts/service_accounts.py: admins manage service accounts; keys act as them; deleting one
revokes its keys; moving a key takes both rights and stays inside the organization."""

import pytest
from django.core.exceptions import ValidationError

from accounts import policy
from accounts import service_accounts as service
from accounts.models import ApiKey, Membership, User
from audit.models import AuditEvent


@pytest.fixture
def team(org, user):
    member = User.objects.create_user("bob@example.com", "a long enough password")
    Membership.objects.create(organization=org, user=member, role=Membership.MEMBER)
    return org, user, member


def test_an_admin_creates_a_service_account_and_a_member_is_refused(team):
    org, owner, member = team
    account = service.service_account_create(actor=owner, organization=org, name="CI")
    assert (account.role, account.created_by) == ("member", owner)
    assert AuditEvent.objects.filter(action="service_account.create", target_id=account.pk)
    with pytest.raises(policy.PermissionDenied):
        service.service_account_create(actor=member, organization=org, name="mine")


def test_an_outsider_cannot_tell_a_service_account_exists(team, outsider):
    org, owner, _ = team
    account = service.service_account_create(actor=owner, organization=org, name="CI")
    with pytest.raises(policy.NotFound):
        service.service_account_update(actor=outsider, account=account, role="admin")


def test_names_are_unique_per_organization_and_roles_are_member_or_admin(team):
    org, owner, _ = team
    service.service_account_create(actor=owner, organization=org, name="CI")
    with pytest.raises(ValidationError, match="already has"):
        service.service_account_create(actor=owner, organization=org, name="CI")
    with pytest.raises(ValidationError, match="role"):
        service.service_account_create(actor=owner, organization=org, name="x", role="owner")


def test_deleting_a_service_account_revokes_its_keys(team):
    org, owner, _ = team
    account = service.service_account_create(actor=owner, organization=org, name="CI")
    key, _ = service.service_account_key_issue(actor=owner, account=account, name="deploy")
    assert key.service_account == account and key.principal_label == "service account CI"
    assert service.service_account_delete(actor=owner, account=account) == 1
    key.refresh_from_db()
    assert key.revoked_at is not None and key.service_account is None


def test_a_disabled_account_gets_no_new_keys(team):
    org, owner, _ = team
    account = service.service_account_create(actor=owner, organization=org, name="CI")
    service.service_account_set_disabled(actor=owner, account=account, disabled=True)
    with pytest.raises(ValidationError, match="Enable"):
        service.service_account_key_issue(actor=owner, account=account, name="k")


def test_moving_a_key_takes_an_admin_and_an_account_of_the_same_organization(team, outsider_org):
    org, owner, member = team
    key, _ = ApiKey.issue(org, "bob's", created_by=member)
    account = service.service_account_create(actor=owner, organization=org, name="CI")
    with pytest.raises(policy.PermissionDenied):
        service.key_transfer(actor=member, key=key, account=account)
    foreign = service.service_account_create(
        actor=outsider_org.billing_owner, organization=outsider_org, name="theirs"
    )
    with pytest.raises(ValidationError, match="another organization"):
        service.key_transfer(actor=owner, key=key, account=foreign)
    service.key_transfer(actor=owner, key=key, account=account)
    key.refresh_from_db()
    assert key.service_account == account and key.created_by == member
    transfers = AuditEvent.objects.filter(organization_id=org.pk)
    assert transfers.filter(action="service_account.key_transfer").count() == 1
    service.key_transfer(actor=owner, key=key, account=None)
    key.refresh_from_db()
    assert key.service_account is None
