"""ASGI entry point: /healthz and /readyz answer first (getmcp/health.py), /mcp/ and /webtools/
go straight to the MCP endpoint, the rest of HTTP to Django, and WebSockets (the live inspector)
through Channels with the dashboard's session."""

from getmcp.environment.startup import web_process

# The settings module, and the web process's own defaults, before Django reads them.
web_process()

from getmcp.descriptors import raise_open_files_limit  # noqa: E402

# One socket per open stream: a process holding thousands of streams needs the hard limit.
raise_open_files_limit()

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402

from gateway.endpoint.app import McpApp  # noqa: E402
from getmcp.health import HealthApp  # noqa: E402
from inspector.routing import websocket_application  # noqa: E402

mcp_app = McpApp(fallback=django_app)
application = ProtocolTypeRouter(
    {"http": HealthApp(mcp_app), "lifespan": mcp_app, "websocket": websocket_application()}
)
