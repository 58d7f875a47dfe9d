"""An ID token is accepted only when every check of OpenID Connect Core 3.1.3.7 passes: signed
by the provider's key with an asymmetric algorithm, for this client, from this issuer, current,
and carrying the nonce of this sign-in."""

import base64
import json
import time

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from sso.oidc import SsoError, check_id_token

ISSUER = "https://idp.corp.example"
CLIENT = "getmcp-client"
NONCE = "n-0S6_WzA2Mj"


@pytest.fixture(scope="module")
def key():
    return RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})


@pytest.fixture(scope="module")
def published(key):
    return KeySet([RSAKey.import_key(key.as_dict(private=False))])


def claims(**changes):
    now = int(time.time())
    values = {
        "iss": ISSUER,
        "aud": CLIENT,
        "sub": "248289761001",
        "email": "ada@corp.example",
        "nonce": NONCE,
        "iat": now,
        "exp": now + 300,
    }
    values.update(changes)
    return {k: v for k, v in values.items() if v is not None}


def token(key, alg="RS256", **changes):
    return jwt.encode({"alg": alg, "kid": "k1"}, claims(**changes), key)


def check(published, id_token):
    return check_id_token(id_token, keys=published, issuer=ISSUER, client_id=CLIENT, nonce=NONCE)


def test_a_token_signed_by_the_provider_for_this_sign_in_is_accepted(key, published):
    assert check(published, token(key))["email"] == "ada@corp.example"


@pytest.mark.parametrize(
    "changes, why",
    [
        ({"iss": "https://evil.example"}, "iss"),
        ({"aud": "another-client"}, "aud"),
        ({"nonce": "a-replayed-nonce"}, "nonce"),
        ({"nonce": None}, "nonce"),
        ({"exp": int(time.time()) - 3600}, "exp"),
        ({"sub": None}, "sub"),
    ],
)
def test_a_token_with_a_wrong_claim_is_refused(key, published, changes, why):
    with pytest.raises(SsoError, match=why):
        check(published, token(key, **changes))


def test_a_token_for_several_audiences_needs_this_client_as_authorized_party(key, published):
    with pytest.raises(SsoError, match="several audiences"):
        check(published, token(key, aud=[CLIENT, "other"]))
    assert check(published, token(key, aud=[CLIENT, "other"], azp=CLIENT))["sub"]


def test_a_token_signed_by_another_key_is_refused(published):
    stranger = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    with pytest.raises(SsoError, match="signature"):
        check(published, token(stranger))


def test_a_token_signed_with_a_shared_secret_or_unsigned_is_refused(published):
    secret = OctKey.generate_key(256, parameters={"kid": "k1"})
    with pytest.raises(SsoError, match="signature"):
        check(published, token(secret, alg="HS256"))
    # An unsigned token, as an attacker would craft it.
    unsigned = ".".join([_b64({"alg": "none", "kid": "k1"}), _b64(claims()), ""])
    with pytest.raises(SsoError, match="signature"):
        check(published, unsigned)


def _b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
