"""The registrable subset of an OAuth client's metadata (RFC 7591 §2, §3.2.2), checked the same
way for a registration (clients.py) and a Client ID Metadata Document (cimd.py)."""

from . import redirects
from .errors import OAuthError
from .models import SCOPES

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# The jwt-bearer grant takes enterprise identity assertions (oauth/id_jag.py); client credentials
# are a service account's, created by its admins (oauth/service_clients.py), never registered.
GRANT_TYPES = ("authorization_code", "refresh_token", JWT_BEARER)
TEXT_LIMITS = {"client_name": 200, "client_uri": 2000, "logo_uri": 2000, "software_id": 200}


def _text(metadata: dict, name: str) -> str:
    value = metadata.get(name, "")
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > TEXT_LIMITS.get(name, 200):
        raise OAuthError("invalid_client_metadata", f"{name} must be a short string")
    return value


def _redirect_uris(metadata: dict, grant_types: list) -> list:
    uris = metadata.get("redirect_uris")
    # A client that only presents assertions never sees a redirect.
    needs_uris = "authorization_code" in grant_types
    if uris is None and not needs_uris:
        uris = []
    if not isinstance(uris, list) or (needs_uris and not uris) or len(uris) > 20:
        raise OAuthError("invalid_redirect_uri", "redirect_uris must list 1 to 20 URIs")
    for uri in uris:
        why = redirects.problem(uri)
        if why:
            raise OAuthError("invalid_redirect_uri", f"redirect URI {uri!r} {why}")
    return uris


def validate_metadata(metadata) -> dict:
    """The registrable subset of client metadata, or OAuthError (RFC 7591 §2, §3.2.2)."""
    if not isinstance(metadata, dict):
        raise OAuthError("invalid_client_metadata", "The body must be a JSON object")
    grant_types = metadata.get("grant_types") or ["authorization_code", "refresh_token"]
    if not isinstance(grant_types, list) or not set(grant_types) <= set(GRANT_TYPES):
        raise OAuthError(
            "invalid_client_metadata", f"grant_types may only be {', '.join(GRANT_TYPES)}"
        )
    uris = _redirect_uris(metadata, grant_types)
    method = metadata.get("token_endpoint_auth_method") or "none"
    if method not in AUTH_METHODS:
        raise OAuthError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}",
        )
    if JWT_BEARER in grant_types and method == "none":
        raise OAuthError(
            "invalid_client_metadata", "The jwt-bearer grant needs a confidential client"
        )
    response_types = metadata.get("response_types") or ["code"]
    if response_types != ["code"]:
        raise OAuthError("invalid_client_metadata", 'response_types must be ["code"]')
    scope = metadata.get("scope") or ""
    if not isinstance(scope, str) or len(scope) > 500:
        raise OAuthError("invalid_client_metadata", "scope must be a string")
    return {
        "redirect_uris": list(uris),
        "token_endpoint_auth_method": method,
        "grant_types": list(grant_types),
        "scope": " ".join(s for s in scope.split() if s in SCOPES),
        **{name: _text(metadata, name) for name in TEXT_LIMITS},
        "software_version": _text(metadata, "software_version")[:100],
    }
