from datetime import timedelta

from django.utils import timezone

from accounts.models import digest_key
from api.models import TOKEN_PREFIX, PersonalAccessToken


def test_a_token_is_stored_as_a_digest_and_found_by_its_raw_value(user):
    token, raw = PersonalAccessToken.issue(user, "laptop")

    assert raw.startswith(TOKEN_PREFIX) and len(raw) > 40
    stored = PersonalAccessToken.objects.get(pk=token.pk)
    assert stored.digest == digest_key(raw)
    assert raw not in {stored.digest, stored.prefix, stored.name}
    assert raw.startswith(stored.prefix)
    assert PersonalAccessToken.find_active(raw) == token


def test_revoked_expired_and_unknown_tokens_are_not_found(user):
    revoked, revoked_raw = PersonalAccessToken.issue(user, "old")
    revoked.revoke()
    _, expired_raw = PersonalAccessToken.issue(
        user, "short", expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert PersonalAccessToken.find_active(revoked_raw) is None
    assert PersonalAccessToken.find_active(expired_raw) is None
    assert PersonalAccessToken.find_active(TOKEN_PREFIX + "guess") is None


def test_the_tokens_of_a_deactivated_user_stop_working(user):
    _, raw = PersonalAccessToken.issue(user, "laptop")
    user.is_active = False
    user.save()
    assert PersonalAccessToken.find_active(raw) is None


def test_last_used_is_written_at_most_once_a_minute(user, django_assert_num_queries):
    token, _ = PersonalAccessToken.issue(user, "laptop")
    with django_assert_num_queries(1):
        token.touch()
    first = token.last_used_at
    with django_assert_num_queries(0):
        token.touch()
    assert token.last_used_at == first
    token.last_used_at = timezone.now() - timedelta(minutes=2)
    with django_assert_num_queries(1):
        token.touch()
