"""Names of the Redis keys the endpoint and the domain share (see docs/architecture.md)."""


def server_generation(slug: str) -> str:
    return f"mcp:gen:srv:{slug}"


def key_generation(digest: str) -> str:
    return f"mcp:gen:key:{digest}"


def session(sid: str) -> str:
    return f"mcp:s:{sid}"


def session_stream(sid: str, stream: str) -> str:
    return f"mcp:s:{sid}:ev:{stream}"


def client_response(sid: str, request_id: str) -> str:
    return f"mcp:s:{sid}:resp:{request_id}"


def cancellation(sid: str, request_id: str) -> str:
    return f"mcp:s:{sid}:cancel:{request_id}"


def server_sessions(server_id: int) -> str:
    return f"mcp:srv:{server_id}:sessions"


def resource_subscribers(server_id: int, uri: str) -> str:
    return f"mcp:srv:{server_id}:sub:{uri}"


def session_subscriptions(sid: str) -> str:
    return f"mcp:s:{sid}:subs"


def server_events(server_id: int) -> str:
    return f"mcp:srv:{server_id}:events"


def rate_window(server_id: int, credential: str, minute: int) -> str:
    return f"mcp:rl:{server_id}:{credential}:{minute}"


KEY_USAGE = "mcp:keys:used"
GRANT_USAGE = "mcp:grants:used"
