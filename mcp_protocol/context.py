"""What a running request (a tool, a prompt, a resource read) sees of its client."""

from typing import Any, Protocol

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def log_level_allows(threshold: str | None, level: str) -> bool:
    """RFC 5424 ordering; no threshold set means every level goes out (session era default)."""
    if threshold is None:
        return True
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


# The capability a server->client request needs the client to have declared.
REQUIRED_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class RequestContext(Protocol):
    protocol_version: str
    client_capabilities: dict
    client_info: dict | None
    credential: str

    async def log(self, level: str, data: Any, logger: str | None = None) -> None: ...

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...

    async def request(self, key: str, method: str, params: dict) -> dict: ...

    async def sleep(self, seconds: float) -> None: ...


class NullContext:
    """A context with no client behind it: for REST calls, test runs and unit tests."""

    def __init__(self, protocol_version="2025-11-25", client_capabilities=None, credential="anon"):
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities or {}
        self.client_info = None
        self.credential = credential
        self.logs: list[dict] = []
        self.progress_events: list[dict] = []

    async def log(self, level, data, logger=None):
        self.logs.append({"level": level, "data": data, "logger": logger})

    async def progress(self, progress, total=None, message=None):
        self.progress_events.append({"progress": progress, "total": total, "message": message})

    async def request(self, key, method, params):
        from .errors import ToolError

        raise ToolError(
            f"This tool needs the client to answer {method}, which this caller cannot do."
        )

    async def sleep(self, seconds):
        import asyncio

        await asyncio.sleep(seconds)
