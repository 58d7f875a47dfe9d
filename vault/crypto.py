"""Encryption of secret values at rest.

Keys come from SECRETS_KEYS (environment or settings): comma-separated Fernet keys, newest
first. New values are encrypted with the first key; every listed key still decrypts, so a key
is rotated by putting a new one in front, running `manage.py reencrypt_secrets`, then dropping
the old one. Generate a key with
`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`.

Without SECRETS_KEYS the key is derived from SECRET_KEY (HKDF-SHA256), so changing SECRET_KEY
then makes stored secrets unreadable: production deployments should set SECRETS_KEYS.
"""

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretUnreadable(Exception):
    """A stored value no configured key can decrypt (a key was dropped too early)."""


def configured_keys() -> tuple[str, ...]:
    configured: list[str] | str = settings.SECRETS_KEYS
    entries = configured.split(",") if isinstance(configured, str) else configured
    keys = tuple(k.strip() for k in entries if k and k.strip())
    return keys or (derived_key(settings.SECRET_KEY),)


def derived_key(secret_key: str) -> str:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"getmcp vault key")
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode())).decode()


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    try:
        return MultiFernet([Fernet(k.encode()) for k in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "SECRETS_KEYS must hold Fernet keys (32 url-safe base64-encoded bytes each)."
        ) from exc


def fernet() -> MultiFernet:
    return _fernet(configured_keys())


def encrypt(value: str) -> str:
    return fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("No configured key decrypts this value.") from exc


def decrypt_recent(token: str, *, max_age_seconds: int, now: float | None = None) -> str | None:
    """The value when it was encrypted at most `max_age_seconds` ago (by the token's own
    timestamp), else None: for values that must not outlive a window, whatever keeps them."""
    try:
        if now is None:
            return fernet().decrypt(token.encode(), ttl=max_age_seconds).decode()
        return fernet().decrypt_at_time(token.encode(), max_age_seconds, int(now)).decode()
    except InvalidToken:
        return None


def reencrypt(token: str) -> str:
    """The same value under the newest key (MultiFernet.rotate)."""
    try:
        return fernet().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("No configured key decrypts this value.") from exc
