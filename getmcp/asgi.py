"""ASGI entry point: /healthz and /readyz answer first (getmcp/health.py), /mcp/ and /webtools/
go straight to the MCP endpoint, the rest of HTTP to Django, and WebSockets (the live inspector)
through Channels with the dashboard's session."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")
# No persistent Postgres connections in a web process (Django's advice for ASGI): each Django
# request runs its sync code in a thread of its own (asgiref's ThreadSensitiveContext), so a
# connection kept for CONN_MAX_AGE is never reused and stays open until the garbage collector
# finds the dead thread's locals; seen as 75 idle connections from one test server once
# getmcp/gc_policy.py made full collections rare. The MCP path's cold compile reconnects
# (one local round trip); warm calls run no SQL. Workers and commands keep their 60 s.
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "0")

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
