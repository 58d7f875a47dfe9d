"""A strict Content-Security-Policy for the dashboard's HTML pages.

Every script and style is a file under /static/, so no inline code is ever allowed: text a user
typed that slipped past escaping still could not run.
"""

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: https:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

# The API docs (Swagger UI) and the admin bring their own scripts and styles (inline, or from
# a CDN): they get a policy that still forbids framing, plugins and a foreign <base>.
EXEMPT_PREFIXES = ("/api/", "/admin/")
EXEMPT_POLICY = "; ".join(
    ["object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'"]
)
# The HTML info page at /mcp/<slug> (served outside Django): one inline <style>, nothing else.
INFO_PAGE_POLICY = "; ".join(
    [
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src 'self' data: https:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
INFO_PAGE_HEADERS = (
    ("content-security-policy", INFO_PAGE_POLICY),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            exempt = request.path.startswith(EXEMPT_PREFIXES)
            response.setdefault("Content-Security-Policy", EXEMPT_POLICY if exempt else POLICY)
            response.setdefault("Referrer-Policy", "same-origin")
            response.setdefault("X-Content-Type-Options", "nosniff")
        return response
