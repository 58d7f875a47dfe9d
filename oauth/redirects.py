"""Which redirect URIs a client may register, and whether a request's URI matches one.

URIs are read as browsers read them: with the WHATWG URL parser (ada), not urllib. The two
disagree on the tricks an attacker uses: `http://attacker\\@127.0.0.1/cb` is host 127.0.0.1 to
urllib and host `attacker` to a browser; tabs and newlines are dropped by browsers; `127.1`,
`0x7f.1` and `%31%32%37.0.0.1` are 127.0.0.1 to a browser and a name to urllib. So a URI is
accepted only when nothing is left to interpretation: no backslash, no userinfo, no whitespace or
control characters, no fragment, and written exactly as a browser serializes it. A URI that
passes is then the same string for every reader, and its WHATWG host is the one shown on the
consent page and the one the browser reaches.

Matching is exact string matching (OAuth 2.1 §2.3.1), except that a loopback URI matches on any
port (RFC 8252 §7.3): native clients such as Claude Code list `http://127.0.0.1/callback` and
pick a free port when they run. Loopback is decided on the WHATWG host.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from ada_url import URL

MAX_LENGTH = 2000
LOOPBACK_HOSTS = {"127.0.0.1", "[::1]", "localhost"}
# Schemes a browser would run or read locally, or not navigate to: never a place to send a code.
FORBIDDEN_SCHEMES = {
    "javascript",
    "data",
    "file",
    "vbscript",
    "about",
    "blob",
    "filesystem",
    "ws",
    "wss",
    "ftp",
}


@dataclass(frozen=True)
class BrowserURL:
    """The parts of a URI that a browser acts on, from its WHATWG parse."""

    href: str
    scheme: str  # without the colon
    host: str  # hostname[:port], "" for URIs without an authority
    hostname: str  # IPv6 in brackets, IPv4 in dotted decimal, names in lower-case ASCII
    port: str
    userinfo: bool  # a user name or password is present
    path: str
    query: str  # with its "?", "" when empty


def parse(uri: str) -> BrowserURL | None:
    """The browser's reading of an absolute URI, or None where a browser would fail it."""
    try:
        url = URL(uri)
    except ValueError:
        return None
    return BrowserURL(
        href=url.href,
        scheme=url.protocol.rstrip(":"),
        host=url.host,
        hostname=url.hostname,
        port=url.port,
        userinfo=bool(url.username or url.password),
        path=url.pathname,
        query=url.search,
    )


def url_problem(uri) -> str | None:
    """Why `uri` is not an unambiguous absolute URL (the rules of the module docstring), or None.
    Shared by redirect URIs and Client ID Metadata Document URLs."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_LENGTH:
        return f"must be a non-empty string of at most {MAX_LENGTH} characters"
    if any(ord(c) <= 0x20 or 0x7F <= ord(c) <= 0x9F for c in uri):
        # Browsers drop tabs and newlines and trim spaces and controls before parsing.
        return "must not contain whitespace or control characters"
    if "\\" in uri:
        # Browsers read a backslash as a slash in http(s) URLs; urllib does not.
        return "must not contain a backslash"
    if "#" in uri:
        return "must not contain a fragment"
    parsed = parse(uri)
    if parsed is None:
        return "is not a valid absolute URI"
    if parsed.userinfo or "@" in _authority(uri):
        return "must not contain a user name or password"
    if parsed.href != uri:
        return f"must be written as browsers read it: {parsed.href}"
    return None


def _authority(uri: str) -> str:
    """The text between `scheme://` and the path (an empty `@` there serializes away)."""
    _, _, rest = uri.partition(":")
    if not rest.startswith("//"):
        return ""
    return re.split(r"[/?]", rest[2:], maxsplit=1)[0]


def problem(uri) -> str | None:
    """Why a redirect URI may not be registered or used, or None."""
    why = url_problem(uri)
    if why:
        return why
    parsed = parse(uri)
    assert parsed is not None  # url_problem parsed it
    if parsed.scheme in FORBIDDEN_SCHEMES:
        return f"may not use the {parsed.scheme}: scheme"
    if parsed.scheme == "https":
        return None
    if parsed.scheme == "http":
        if is_loopback(uri):
            return None
        return "may use http only for loopback (127.0.0.1, [::1], localhost)"
    # Private-use schemes of native apps (RFC 8252 §7.1), e.g. cursor://..., need a path.
    return None if (parsed.path.strip("/") or parsed.host) else "is not a usable URI"


def is_loopback(uri: str) -> bool:
    """An http URI whose host, as a browser reads it, is this machine's loopback."""
    parsed = parse(uri)
    return parsed is not None and parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS


def _loopback_key(uri: str) -> tuple[str, str, str, str] | None:
    """What two loopback URIs must share to match: all but the port (RFC 8252 §7.3)."""
    parsed = parse(uri)
    if parsed is None or not is_loopback(uri):
        return None
    return (parsed.scheme, parsed.hostname, parsed.path, parsed.query)


def matches(requested: str, registered: list[str]) -> bool:
    """Whether a valid requested URI is one of the client's (stored URIs that fail today's rules,
    registered before them, match nothing)."""
    if problem(requested):
        return False
    usable = [uri for uri in registered if isinstance(uri, str) and not problem(uri)]
    if requested in usable:
        return True
    wanted = _loopback_key(requested)
    return wanted is not None and any(_loopback_key(uri) == wanted for uri in usable)


def host_of(uri: str) -> str:
    """Where a browser sent to `uri` goes: its WHATWG host (with a port other than the
    scheme's default), or `scheme:` for a native app's URI without one."""
    parsed = parse(uri)
    if parsed is None:
        return "(invalid address)"
    return parsed.host or f"{parsed.scheme}:"


def form_action_source(uri: str) -> str:
    """The CSP source expression that lets the consent form end at `uri` (browsers apply
    form-action to the redirect after the POST): its origin, or `scheme:` for a native app's URI
    without a host. CSP host sources cannot name an IPv6 address (their characters are letters,
    digits, "-" and "."; Chromium ignores `http://[::1]:port` and blocks the redirect), so an
    IPv6 loopback URI gets its scheme alone."""
    parsed = parse(uri)
    if parsed is None:
        return ""
    if not parsed.host or parsed.hostname.startswith("["):
        return f"{parsed.scheme}:"
    return f"{parsed.scheme}://{parsed.host}"


def with_params(uri: str, params: dict[str, str]) -> str:
    """`uri` with `params` appended to its query. Only for a URI that passed `problem`: such a
    URI has no fragment and is its own serialization, so appending keeps every reader's host."""
    why = problem(uri)
    if why:
        raise ValueError(f"refusing to redirect to an unvalidated URI: {why}")
    base, _, query = uri.partition("?")
    return base + "?" + "&".join(q for q in (query, urlencode(params)) if q)
