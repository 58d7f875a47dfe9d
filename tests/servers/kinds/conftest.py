import pytest

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import McpError


class ScriptedContext(RequestContext):
    """A client that answers server->client requests from a script and records everything."""

    def __init__(self, answers=None, protocol_version="2025-11-25"):
        self.protocol_version = protocol_version
        self.client_capabilities = {"elicitation": {}, "sampling": {}, "roots": {}}
        self.client_info = None
        self.credential = "anon"
        self.answers = answers or {}
        self.events: list[tuple] = []

    async def log(self, level, data, logger=None):
        self.events.append(("log", level, data, logger))

    async def progress(self, progress, total=None, message=None):
        self.events.append(("progress", progress, total, message))

    async def request(self, key, method, params):
        self.events.append(("request", key, method, params))
        if key not in self.answers:
            raise McpError(-32021, f"no answer for {key}")
        return self.answers[key]

    async def sleep(self, seconds):
        self.events.append(("sleep", seconds))


@pytest.fixture
def scripted():
    return ScriptedContext
