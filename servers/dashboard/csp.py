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

# The browsable API and the admin bring their own scripts and styles; they keep Django's defaults.
EXEMPT_PREFIXES = ("/api/", "/admin/")


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith(EXEMPT_PREFIXES):
            return response
        if response.get("Content-Type", "").startswith("text/html"):
            response.setdefault("Content-Security-Policy", POLICY)
            response.setdefault("Referrer-Policy", "same-origin")
            response.setdefault("X-Content-Type-Options", "nosniff")
        return response
