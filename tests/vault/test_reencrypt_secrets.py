import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from vault.models import Secret


def test_reencrypting_moves_every_value_to_the_newest_key(org, settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    Secret.store(org, "A", "value-a", test_value="test-a")
    Secret.store(org, "B", "value-b")
    settings.SECRETS_KEYS = [new, old]
    call_command("reencrypt_secrets")
    settings.SECRETS_KEYS = [new]
    values = {s.name: (s.reveal(), s.reveal(test=True)) for s in Secret.objects.all()}
    assert values == {"A": ("value-a", "test-a"), "B": ("value-b", "value-b")}


def test_values_no_key_can_read_are_reported_by_name(org, settings):
    lost = Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [lost]
    Secret.store(org, "LOST", "gone")
    settings.SECRETS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(CommandError, match="LOST"):
        call_command("reencrypt_secrets")
