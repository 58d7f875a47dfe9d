"""ASGI entry point: /healthz and /readyz answer first (getmcp/health.py), /mcp/ and /webtools/
go straight to the MCP endpoint, the rest to Django."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from getmcp.health import HealthApp  # noqa: E402
from servers.endpoint.app import McpApp  # noqa: E402

application = HealthApp(McpApp(fallback=django_app))
