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

# The API docs (Swagger UI, served from /static/ by drf-spectacular-sidecar): scripts from this
# site only (its start-up script is a file too); Swagger UI's page has one inline <style> and
# sets style attributes. Nothing is fetched from another origin.
DOCS_PATH = "/api/docs/"
DOCS_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
# The admin and the API's other HTML (DRF's error pages) bring their own inline scripts and
# styles: they get a policy that still forbids framing, plugins and a foreign <base>.
EXEMPT_PREFIXES = ("/api/", "/admin/")
EXEMPT_POLICY = "; ".join(
    ["object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'"]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            if request.path == DOCS_PATH:
                policy = DOCS_POLICY
            elif request.path.startswith(EXEMPT_PREFIXES):
                policy = EXEMPT_POLICY
            else:
                policy = POLICY
            response.setdefault("Content-Security-Policy", policy)
            response.setdefault("Referrer-Policy", "same-origin")
            response.setdefault("X-Content-Type-Options", "nosniff")
        return response
