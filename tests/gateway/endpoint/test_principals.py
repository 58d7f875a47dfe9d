"""A key's credential names its principal (gateway/endpoint/auth.py): the person behind a
personal key, or the service account behind a service account's key. The call log records that
person (activity's `user`); tests/dashboard/views/test_calls.py shows the page."""

from accounts.models import ApiKey, ServiceAccount, digest_key
from gateway.endpoint import auth


def test_a_personal_keys_credential_acts_as_its_creator(org, user):
    _, raw = ApiKey.issue(org, "laptop", created_by=user)
    credential = auth._load(digest_key(raw), "1")
    assert (credential.user_id, credential.service_account_id) == (user.pk, None)
    assert credential.role == "owner" and not credential.suspended


def test_a_service_account_keys_credential_acts_as_the_account_not_its_maker(org, user):
    account = ServiceAccount.objects.create(organization=org, name="CI", role="member")
    _, raw = ApiKey.issue(org, "deploy", created_by=user, service_account=account)
    credential = auth._load(digest_key(raw), "1")
    assert (credential.user_id, credential.service_account_id) == (None, account.pk)
    assert credential.role == "member"
