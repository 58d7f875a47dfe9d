import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from getmcp.environment import Environment
from vault import crypto


def test_a_value_round_trips_and_the_ciphertext_does_not_contain_it():
    token = crypto.encrypt("sk_live_abcdef")
    assert "sk_live_abcdef" not in token
    assert crypto.decrypt(token) == "sk_live_abcdef"


def test_without_configured_keys_the_key_is_derived_from_secret_key(settings):
    settings.SECRETS_KEYS = []
    token = crypto.encrypt("v")
    settings.SECRET_KEY = "another-secret-key"
    with pytest.raises(crypto.SecretUnreadable):
        crypto.decrypt(token)


def test_new_writes_use_the_newest_key_and_old_values_still_decrypt(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    old_token = crypto.encrypt("before rotation")
    settings.SECRETS_KEYS = [new, old]
    new_token = crypto.encrypt("after rotation")
    assert crypto.decrypt(old_token) == "before rotation"
    assert Fernet(new.encode()).decrypt(new_token.encode()) == b"after rotation"
    settings.SECRETS_KEYS = [new]
    with pytest.raises(crypto.SecretUnreadable):
        crypto.decrypt(old_token)


def test_reencrypting_moves_a_value_to_the_newest_key(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    token = crypto.encrypt("rotate me")
    settings.SECRETS_KEYS = [new, old]
    rotated = crypto.reencrypt(token)
    settings.SECRETS_KEYS = [new]
    assert crypto.decrypt(rotated) == "rotate me"


def test_keys_may_come_from_the_environment_as_a_comma_separated_list(settings):
    key = Fernet.generate_key().decode()
    settings.SECRETS_KEYS = Environment({"SECRETS_KEYS": f" {key} ,"}).SECRETS_KEYS
    assert crypto.configured_keys() == (key,)


def test_a_malformed_key_is_a_configuration_error(settings):
    settings.SECRETS_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured, match="SECRETS_KEYS"):
        crypto.encrypt("x")
