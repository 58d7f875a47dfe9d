"""What a running request (a tool, a prompt, a resource read) sees of its client."""

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NoReturn, Protocol

from .caller import ANONYMOUS, Caller, stored

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


# The headers of a request that carried none: shared and read-only, so nothing is allocated.
NO_HEADERS: Mapping[str, str] = MappingProxyType({})


class RequestContext(Protocol):
    """The contract every era's context fulfils (session, stateless, task, no client).

    The contexts subclass it explicitly, so the optional features below default here at class
    level: a context that does not offer one reads the class attribute, and nothing is allocated
    per request. Code reads every attribute directly; none is probed with getattr.
    """

    # The client, as its session or the request itself declared it.
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    # Who is calling (mcp_protocol/caller.py), resolved once by the gateway's pipeline.
    caller: Caller = ANONYMOUS
    # The inbound request's headers (lower-case names) that an http tool may forward.
    client_headers: Mapping[str, str] = NO_HEADERS
    # Session era (2025 revisions): the request belongs to a session the client keeps open, so the
    # server may talk back on its stream later; every other era's context leaves this False.
    in_session: bool = False
    # Test runs: the server's test secrets, and what the run did, for the person debugging it.
    use_test_secrets: bool = False
    http_trace: list[dict[str, Any]] | None = None  # each outbound exchange, secrets masked
    # The connected accounts (connections/) the call acted through, as the call log names them;
    # a tool adds to its own context's tuple (an instance attribute), never to this default.
    connections_used: tuple[str, ...] = ()
    # The task the call runs as (mcptasks): a worker's context runs one; a request's context
    # names the task it handed its call to, whose worker then names in the call's log row the
    # connections it acted through.
    task_id: str = ""
    host_calls: list[dict[str, Any]] | None = None  # code tools: each host function call
    printed: list[dict[str, Any]] | None = None  # code tools: what the code printed
    # Stateless era with the tasks extension: a workflow `task` step hands the call over to a
    # task by calling this (it raises and never returns). None elsewhere: the step does nothing.
    start_task: Callable[[], NoReturn] | None = None

    @property
    def credential(self) -> str:
        """The credential's stable name (`Caller.ident`): what tasks and kept results are
        bound to."""
        return self.caller.ident

    @credential.setter
    def credential(self, ident: str) -> None:
        # A context built outside the pipeline (a test's client, a harness) may still name its
        # credential the old way; it gets the caller that name stands for.
        self.caller = stored(None, ident)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None: ...

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...

    async def request(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]: ...

    async def sleep(self, seconds: float) -> None: ...

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """A notification about this request to the client that made it (a URL elicitation's
        `notifications/elicitation/complete`); only a session's stream carries one."""
        return None

    async def disconnect(self, retry_ms: int = 1000) -> None:
        """Let the client's connection go while the call goes on; only a session-era stream
        that the client can resume does anything with it."""
        return None


class NullContext(RequestContext):
    """A context with no client behind it: for REST calls, test runs and unit tests."""

    def __init__(
        self,
        protocol_version: str = "2025-11-25",
        client_capabilities: dict[str, Any] | None = None,
        caller: Caller = ANONYMOUS,
    ) -> None:
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities or {}
        self.client_info = None
        self.caller = caller
        self.logs: list[dict[str, Any]] = []
        self.progress_events: list[dict[str, Any]] = []

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        self.logs.append({"level": level, "data": data, "logger": logger})

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.progress_events.append({"progress": progress, "total": total, "message": message})

    async def request(self, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from .errors import ToolError

        raise ToolError(
            f"This tool needs the client to answer {method}, which this caller cannot do."
        )

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(seconds)
