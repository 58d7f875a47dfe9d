from pathlib import Path

import pytest

from mcp_protocol.errors import McpError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class AnsweringClient:
    """A client context that answers server->client requests from a dict and records the rest."""

    def __init__(self, answers=None, capabilities=None):
        self.protocol_version = "2025-11-25"
        self.client_capabilities = (
            {"elicitation": {}, "sampling": {}, "roots": {}}
            if capabilities is None
            else capabilities
        )
        self.client_info = None
        self.credential = "anon"
        self.answers = answers or {}
        self.logs: list[tuple] = []
        self.progress_events: list[tuple] = []
        self.requests: list[tuple] = []
        self.slept: list[float] = []

    async def log(self, level, data, logger=None):
        self.logs.append((level, data, logger))

    async def progress(self, progress, total=None, message=None):
        self.progress_events.append((progress, total, message))

    async def request(self, key, method, params):
        self.requests.append((key, method, params))
        if key not in self.answers:
            raise McpError(-32021, f"no answer for {key}")
        return self.answers[key]

    async def sleep(self, seconds):
        self.slept.append(seconds)


@pytest.fixture
def examples_dir():
    return EXAMPLES
