"""The Content-Security-Policy a host applies to a view, from the view's declared `csp`
(the extension's McpUiResourceCsp). What is not declared is refused: no network, no frames, no
foreign base, no plugins; inline script and style are allowed because a view is one document."""

from .spec import CSP_KEYS, ORIGIN


def declared_origins(csp, key: str) -> list[str]:
    """The origins under `key`, keeping only well-formed ones: an origin is put into a header,
    so anything that could end a directive or add a keyword is dropped."""
    values = csp.get(key) if isinstance(csp, dict) else None
    if not isinstance(values, list):
        return []
    return [value for value in values if isinstance(value, str) and ORIGIN.match(value)]


def content_security_policy(csp) -> str:
    found = {key: " ".join(declared_origins(csp, key)) for key in CSP_KEYS}
    resources = found["resourceDomains"]
    connect, frames, bases = (
        found[key] or "'none'" for key in ("connectDomains", "frameDomains", "baseUriDomains")
    )
    directives = [
        "default-src 'none'",
        f"script-src 'unsafe-inline' {resources}",
        f"style-src 'unsafe-inline' {resources}",
        f"img-src data: blob: {resources}",
        f"font-src data: {resources}",
        f"media-src data: blob: {resources}",
        f"connect-src {connect}",
        f"frame-src {frames}",
        f"base-uri {bases}",
        "object-src 'none'",
        "form-action 'none'",
        "frame-ancestors 'self'",
    ]
    return "; ".join(directive.strip() for directive in directives)
