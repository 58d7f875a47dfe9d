"""The consent form's proof that the person who saw this consent page is the one pressing Allow.

Django's CSRF token is tied to a cookie secret that every login rotates. A consent page stays
open while the person signs in elsewhere (a client that opened the authorization URL twice, a
second tab, "use another account"): the rotation made the page's token stale and the Allow was
refused with a 403 that strands the client waiting for its callback. So the consent form carries
its own token instead, signed with the site's key and bound to what it approves: the user, their
password generation (a password change ends it) and the exact authorization request. A forged
cross-site POST has no such token: it cannot read the victim's consent page, and a token minted
for the attacker's own account names another user. It expires after a few minutes.
"""

import hashlib

import orjson
from django.core import signing
from django.utils.crypto import constant_time_compare

SALT = "oauth.consent"
MAX_AGE_SECONDS = 15 * 60


def _request_digest(fields: list[tuple[str, str]]) -> str:
    return hashlib.sha256(orjson.dumps(sorted(fields))).hexdigest()[:32]


def _password_generation(user) -> str:
    return user.get_session_auth_hash()[:16]


def consent_token(*, user, fields: list[tuple[str, str]]) -> str:
    return signing.dumps(
        {"u": user.pk, "p": _password_generation(user), "r": _request_digest(fields)}, salt=SALT
    )


def consent_token_valid(*, token: str | None, user, fields: list[tuple[str, str]]) -> bool:
    if not token:
        return False
    try:
        data = signing.loads(token, salt=SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:
        return False
    if not isinstance(data, dict) or data.get("u") != user.pk:
        return False
    return constant_time_compare(
        str(data.get("p")), _password_generation(user)
    ) and constant_time_compare(str(data.get("r")), _request_digest(fields))
