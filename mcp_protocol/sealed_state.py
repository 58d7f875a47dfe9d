"""Sealed MRTR `requestState`: state the server hands to a stateless client and gets back later.

The client holds the token, so it is attacker-controlled: it is encrypted and authenticated with
AES-256-GCM (nothing inside is readable or changeable), carries its own expiry, and is bound to
the server, tool and credential it was issued for (and to any other binding the caller adds, such
as the method). The bindings are the AEAD's associated data,
never stored in the token, so a token replayed under another binding fails authentication.

Token layout (URL-safe base64 without padding): version byte | 16-byte salt | 12-byte nonce |
ciphertext+tag. Each token gets its own salt, so the HKDF-derived key is never reused across
tokens and a 96-bit random nonce never risks a collision under one key.
"""

import base64
import binascii
import os
import time
from typing import Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .errors import INVALID_PARAMS, McpError

VERSION = b"\x01"
SALT_BYTES = 16
NONCE_BYTES = 12
INFO = b"getmcp mrtr requestState v1"
BIND_KEYS = ("server", "tool", "credential")
_HEADER = len(VERSION) + SALT_BYTES + NONCE_BYTES
_TAG_BYTES = 16


def _key(secret: bytes, salt: bytes) -> bytes:
    if not secret:
        raise ValueError("a non-empty secret is required to seal request state")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=INFO).derive(secret)


def _associated_data(bind: dict[str, Any]) -> bytes:
    """Every binding given (server, tool and credential at least), in a canonical form."""
    missing = [key for key in BIND_KEYS if key not in bind]
    if missing:
        raise ValueError(f"bind is missing {', '.join(missing)}")
    return orjson.dumps({str(k): str(v) for k, v in bind.items()}, option=orjson.OPT_SORT_KEYS)


def _refused(reason: str) -> McpError:
    # The reason never says which binding differed: a forger learns nothing about the others.
    return McpError(INVALID_PARAMS, "Invalid requestState", {"reason": reason})


def seal(payload: dict[str, Any], *, secret: bytes, bind: dict[str, Any], ttl_seconds: int) -> str:
    if not isinstance(payload, dict):
        raise TypeError("payload must be a dict")
    if ttl_seconds <= 0:
        raise ValueError("ttl_seconds must be positive")
    salt, nonce = os.urandom(SALT_BYTES), os.urandom(NONCE_BYTES)
    body = orjson.dumps({"exp": int(time.time()) + int(ttl_seconds), "p": payload})
    sealed = AESGCM(_key(secret, salt)).encrypt(nonce, body, _associated_data(bind))
    return base64.urlsafe_b64encode(VERSION + salt + nonce + sealed).rstrip(b"=").decode()


def unseal(token: str, *, secret: bytes, bind: dict[str, Any]) -> dict[str, Any]:
    """The payload of a token sealed under the same secret and binding; McpError(-32602) for a
    token that was tampered with, sealed for another server/tool/credential, or has expired."""
    if not isinstance(token, str) or not token:
        raise _refused("malformed")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise _refused("malformed") from None
    if len(raw) < _HEADER + _TAG_BYTES or raw[:1] != VERSION:
        raise _refused("malformed")
    salt = raw[1 : 1 + SALT_BYTES]
    nonce = raw[1 + SALT_BYTES : _HEADER]
    try:
        body = AESGCM(_key(secret, salt)).decrypt(nonce, raw[_HEADER:], _associated_data(bind))
    except InvalidTag:
        raise _refused("failed verification") from None
    state = orjson.loads(body)
    if state["exp"] <= time.time():
        raise _refused("expired")
    payload: dict[str, Any] = state["p"]  # sealed from a dict (seal refuses anything else)
    return payload
