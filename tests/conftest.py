import pytest

from accounts.models import User


@pytest.fixture
def user(db):
    return User.objects.create_user("alice@example.com", "correct horse battery staple")


@pytest.fixture
def org(user):
    return user.personal_organization()


@pytest.fixture
def outsider(db):
    """A user of another organization: nothing of `org` may ever reach them."""
    return User.objects.create_user("mallory@example.net", "another long passphrase")


@pytest.fixture
def outsider_org(outsider):
    return outsider.personal_organization()
