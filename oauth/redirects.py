"""Which redirect URIs a client may register, and whether a request's URI matches one.

Exact string matching (OAuth 2.1 §2.3.1), except that a loopback URI matches on any port
(RFC 8252 §7.3): native clients such as Claude Code list `http://127.0.0.1/callback` and pick a
free port when they run.
"""

from urllib.parse import urlsplit

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
# Schemes a browser would run or read locally: never a place to send a code to.
FORBIDDEN_SCHEMES = {"javascript", "data", "file", "vbscript", "about", "blob", "filesystem"}


def is_loopback(uri: str) -> bool:
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme == "http" and host in LOOPBACK_HOSTS


def problem(uri) -> str | None:
    """Why a redirect URI may not be registered, or None."""
    if not isinstance(uri, str) or not uri or len(uri) > 2000:
        return "must be a non-empty string of at most 2000 characters"
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "is not a valid URI"
    scheme = parts.scheme.lower()
    if not scheme:
        return "must be an absolute URI"
    if parts.fragment or "#" in uri:
        return "must not contain a fragment"
    if scheme in FORBIDDEN_SCHEMES:
        return f"may not use the {scheme}: scheme"
    if scheme == "https":
        return None if parts.netloc else "must name a host"
    if scheme == "http":
        return None if is_loopback(uri) else "may use http only for loopback (127.0.0.1, [::1])"
    # Private-use schemes of native apps (RFC 8252 §7.1), e.g. cursor://..., need a path.
    return None if (parts.path or parts.netloc) else "is not a usable URI"


def _without_port(uri: str) -> tuple:
    parts = urlsplit(uri)
    return (parts.scheme, parts.hostname or "", parts.path or "/", parts.query)


def matches(requested: str, registered: list[str]) -> bool:
    if requested in registered:
        return True
    if not is_loopback(requested):
        return False
    wanted = _without_port(requested)
    return any(is_loopback(uri) and _without_port(uri) == wanted for uri in registered)


def host_of(uri: str) -> str:
    parts = urlsplit(uri)
    return parts.hostname or f"{parts.scheme}:"
