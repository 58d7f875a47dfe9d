import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.utils import timezone

from vault import crypto
from vault.models import Secret


def test_reencrypting_moves_every_value_to_the_newest_key(org, settings):
    # Rows other tests committed for live servers stay for the session, sealed with the
    # session's key: it stays readable, or the command would report those.
    session_keys = list(crypto.configured_keys())
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    Secret.store(org, "A", "value-a", test_value="test-a")
    Secret.store(org, "B", "value-b")
    settings.SECRETS_KEYS = [new, old, *session_keys]
    call_command("reencrypt_secrets")
    settings.SECRETS_KEYS = [new]
    values = {
        s.name: (s.reveal(), s.reveal(test=True)) for s in Secret.objects.filter(organization=org)
    }
    assert values == {"A": ("value-a", "test-a"), "B": ("value-b", "value-b")}


def test_values_no_key_can_read_are_reported_by_name(org, settings):
    lost = Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [lost]
    Secret.store(org, "LOST", "gone")
    settings.SECRETS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(CommandError, match="LOST"):
        call_command("reencrypt_secrets")


def test_sso_and_connected_account_secrets_move_to_the_newest_key_too(org, user, settings):
    from connections.models import Connection as Connected
    from connections.models import Provider
    from oauth.models import Client, Grant, RefreshToken
    from servers.models import Server
    from sso.models import Connection as SsoConnection

    session_keys = list(crypto.configured_keys())
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.SECRETS_KEYS = [old]
    sso = SsoConnection(organization=org, issuer="https://idp.example", client_id="getmcp")
    sso.set_client_secret("sso-secret")
    sso.save()
    provider = Provider(
        organization=org,
        key="github",
        name="GitHub",
        authorization_url="https://github.example/authorize",
        token_url="https://github.example/token",
        client_id="gh",
    )
    provider.set_client_secret("provider-secret")
    provider.save()
    connected = Connected.objects.create(
        provider=provider,
        organization=org,
        user=user,
        access_token_ciphertext=crypto.encrypt("access-token"),
        refresh_token_ciphertext=crypto.encrypt("refresh-token"),
    )
    unsecret = Provider.objects.create(
        organization=org,
        key="nosecret",
        name="Public client",
        authorization_url="https://p.example/a",
        token_url="https://p.example/t",
        client_id="pub",
    )
    app = Client.objects.create(
        client_id="https://app.example/client.json",
        client_name="App",
        redirect_uris=["https://app.example/cb"],
    )
    grant = Grant.objects.create(
        user=user,
        organization=org,
        server=Server.objects.create(organization=org, slug="weather", name="weather"),
        client=app,
        scope="mcp",
        resource="http://x/mcp/weather",
    )
    rotated = RefreshToken.objects.create(
        digest="d" * 64,
        grant=grant,
        expires_at=timezone.now(),
        successor=crypto.encrypt("the successor pair"),
    )

    settings.SECRETS_KEYS = [new, old, *session_keys]  # and what other tests committed reads
    call_command("reencrypt_secrets")
    settings.SECRETS_KEYS = [new]  # the old key is retired: only the new one reads them now

    sso.refresh_from_db()
    provider.refresh_from_db()
    connected.refresh_from_db()
    unsecret.refresh_from_db()
    rotated.refresh_from_db()
    assert sso.client_secret() == "sso-secret"
    assert provider.client_secret() == "provider-secret"
    assert connected.access_token() == "access-token"
    assert connected.refresh_token() == "refresh-token"
    assert unsecret.client_secret_ciphertext == ""
    assert crypto.decrypt(rotated.successor) == "the successor pair"


def test_an_sso_secret_no_key_can_read_is_reported_without_its_value(org, settings):
    from sso.models import Connection as SsoConnection

    settings.SECRETS_KEYS = [Fernet.generate_key().decode()]
    sso = SsoConnection(organization=org, issuer="https://idp.example", client_id="getmcp")
    sso.set_client_secret("lost-secret")
    sso.save()
    settings.SECRETS_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(CommandError, match=f"sso.Connection {sso.pk}") as raised:
        call_command("reencrypt_secrets")
    assert "lost-secret" not in str(raised.value)
