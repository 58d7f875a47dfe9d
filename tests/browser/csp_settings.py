"""The project's settings with the dashboard's Content-Security-Policy middleware switched on,
so the browser tests prove that every page works under the policy (no inline code anywhere)."""

from getmcp.settings import *  # noqa: F403

CSP_MIDDLEWARE = "dashboard.csp.ContentSecurityPolicyMiddleware"
if CSP_MIDDLEWARE not in MIDDLEWARE:  # noqa: F405
    MIDDLEWARE = [*MIDDLEWARE, CSP_MIDDLEWARE]  # noqa: F405
