"""The keys of the audit chain's HMAC, which live in settings and never in the database.

AUDIT_MAC_KEYS holds "id:secret" entries, newest first: new rows and checkpoints are MACed with
the first; every listed key still verifies, so a key is rotated by putting a new one in front
and keeping the old ones for as long as rows MACed with them are kept. Each row stores the id
of its key (never the key), so a row whose key was dropped is reported as such.

Without AUDIT_MAC_KEYS (embedded and development mode) one key is derived from SECRET_KEY with
HKDF-SHA256 and named "sk-" plus the first 8 hex digits of a digest of the derived key: changing
SECRET_KEY then changes the id, and `audit verify` names the missing key instead of reporting
every row as edited. Production sets AUDIT_MAC_KEYS (docs/audit.md); the entry `derived` (no
colon) stands for that derived key, so an installation that ran without AUDIT_MAC_KEYS lists it
after its new key to keep its older rows verifiable.
"""

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

_KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
MIN_SECRET_LENGTH = 16


@dataclass(frozen=True)
class MacKey:
    id: str
    secret: bytes


def derived_key(secret_key: str) -> MacKey:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"getmcp audit mac key")
    secret = hkdf.derive(secret_key.encode())
    fingerprint = hashlib.sha256(b"getmcp audit key id\x00" + secret).hexdigest()[:8]
    return MacKey(f"sk-{fingerprint}", secret)


@lru_cache(maxsize=4)
def _parse(entries: tuple[str, ...], secret_key: str) -> tuple[MacKey, ...]:
    if not entries:
        return (derived_key(secret_key),)
    keys = []
    for entry in entries:
        if entry == "derived":
            keys.append(derived_key(secret_key))
            continue
        key_id, sep, secret = entry.partition(":")
        if not sep or not _KEY_ID.match(key_id) or len(secret) < MIN_SECRET_LENGTH:
            raise ImproperlyConfigured(
                "AUDIT_MAC_KEYS entries are 'id:secret' (id of letters, digits, '_.-', at most "
                f"32; a secret of at least {MIN_SECRET_LENGTH} characters)."
            )
        keys.append(MacKey(key_id, secret.encode()))
    if len({k.id for k in keys}) != len(keys):
        raise ImproperlyConfigured("AUDIT_MAC_KEYS names one key id twice.")
    return tuple(keys)


def configured() -> tuple[MacKey, ...]:
    entries = settings.AUDIT_MAC_KEYS
    if isinstance(entries, str):
        entries = entries.split(",")
    return _parse(tuple(e.strip() for e in entries if e and e.strip()), settings.SECRET_KEY)


def current() -> MacKey:
    """The key new rows and checkpoints are MACed with."""
    return configured()[0]


def lookup(key_id: str) -> MacKey | None:
    return next((k for k in configured() if k.id == key_id), None)
