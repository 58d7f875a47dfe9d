import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The shared fixtures create users; the default hasher costs seconds on a busy machine.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
