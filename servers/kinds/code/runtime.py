"""Running one call of a Python code tool in a Monty sandbox worker.

The driver starts the tool's module plus a call of `main` in a checked-out worker and answers
every pause itself (feed_start/resume): host functions (host.py), the names the sandbox looks
up (`secrets`, the host functions), sleeps (waited here, within the wall time) and other OS
calls (Monty's default answers: no files, no environment). Counting and timing every pause here
is what lets a breach of any limit end the call as a tool error that names the limit, and nothing
the code raises or catches can stop that.

While the code waits for the client (elicit, sample), for a nested tool (call_tool) or sleeps
(time.sleep, asyncio.sleep; all but the shortest), the sandbox is dumped and its worker
released: a person slow to answer or code that naps holds no worker, and a nested code tool
never waits for a worker its caller holds. Taking a worker again goes through the fair queue
of shares.py like the first time.
"""

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NoReturn, cast, get_args

from pydantic_monty import (
    AsyncFutureSnapshot,
    AsyncNameLookupSnapshot,
    CollectStreams,
    ExcType,
    MontyComplete,
    MontyCrashedError,
    MontyError,
    MontyRuntimeError,
    MontySyntaxError,
)

from mcp_protocol.context import RequestContext
from mcp_protocol.errors import Cancelled, InputRequired, McpError, ToolError

from .host import CLIENT_WAITS, FUNCTIONS, Host, SandboxException, describe
from .pool import get_pool, lower_priority
from .python_source import Entry
from .shares import Tenant, hold, let_go
from .tool import CodeTool

if TYPE_CHECKING:
    from vault.masking import Masker

log = logging.getLogger(__name__)

# Appended after the tool's own source (so its line numbers stay as written): the `ctx` that
# `main(args, ctx)` receives, whose methods are the same host functions as the globals.
CONTEXT_CLASS = """

class _GetmcpContext:
    def __init__(self, info):
        self.tool = info["tool"]
        self.protocol_version = info["protocolVersion"]
        self.client = info["client"]
        self.is_test = info["isTest"]
        self.fetch = _getmcp_fetch
        self.log = _getmcp_log
        self.progress = _getmcp_progress
        self.elicit = _getmcp_elicit
        self.sample = _getmcp_sample
        self.call_tool = _getmcp_call_tool
"""


def _stub(name: str) -> Callable[..., NoReturn]:
    """What the sandbox holds for a host function: only its name matters, the driver answers."""

    def host_function(
        *args: Any, **kwargs: Any
    ) -> NoReturn:  # pragma: no cover - never called: the driver answers
        raise RuntimeError(f"{name} is answered by the driver")

    host_function.__name__ = host_function.__qualname__ = name
    return host_function


STUBS = {name: _stub(name) for name in FUNCTIONS}
LOOKUPS = {**STUBS, **{f"_getmcp_{name}": stub for name, stub in STUBS.items()}}


# A result too big to return is refused inside the sandbox, so it never crosses into this process.
OUTPUT_CHECK = """
if len(repr(_getmcp_result)) > _getmcp_info["outputBytes"]:
    raise MemoryError("getmcp output limit exceeded")
_getmcp_result
"""
OUTPUT_BREACH = "getmcp output limit exceeded"

# Sleeps at least this long park the sandbox (a park costs about a millisecond); shorter ones are
# waited with the worker held, at most CODE_MAX_HOST_CALLS of them per call.
PARK_SLEEPS_FROM_SECONDS = 0.005


def driver(entry: Entry) -> str:
    call = "main(args, _GetmcpContext(_getmcp_info))" if entry.takes_ctx else "main(args)"
    awaiting = "await " if entry.is_async else ""
    return CONTEXT_CLASS + f"\n_getmcp_result = {awaiting}{call}\n" + OUTPUT_CHECK


# Every exception type the sandbox knows (Monty raises only these): a host call's failure is
# resumed as one of them, or the sandbox's answer is a TypeError that no code can catch.
CATCHABLE = frozenset(get_args(ExcType))
# Host-call failures that end the whole call rather than raise inside the code.
ENDS_THE_CALL = (ToolError, McpError, InputRequired, Cancelled)


def raised(exc_type: str, message: str) -> dict[str, Any]:
    """A host call's outcome as an exception raised where the code called it."""
    if exc_type not in CATCHABLE:
        exc_type, message = "RuntimeError", f"{exc_type}: {message}"
    return {"exc_type": exc_type, "message": message}


class LimitExceeded(ToolError):
    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"The code tool was stopped: {what} exceeded ({detail}).")


class Run:
    def __init__(
        self,
        tool: CodeTool,
        arguments: dict[str, Any],
        ctx: RequestContext,
        masker: "Masker",
        secrets: dict[str, Any],
        connections: dict[str, str] | None = None,
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.ctx = ctx
        self.masker = masker
        self.secrets = secrets
        self.connections = connections or {}
        self.limits = tool.limits
        self.host = Host(self)
        self.host_calls = 0
        self.spent = 0.0  # wall time so far, time waiting for the client excluded
        self.session: Any = None  # the sandbox worker's session while the code runs
        self.prints = CollectStreams(max_bytes=tool.limits.output_bytes)
        self.trace = ctx.host_calls
        self.tenant = Tenant.of(owner_id=tool.owner_id, organization_id=tool.organization_id)

    def wall_left(self) -> float:
        return float(self.limits.wall_seconds - self.spent)

    # -- the worker -------------------------------------------------------------------------------

    async def _checkout(self) -> Any:
        if not await hold(self.tenant):
            raise ToolError(
                "This account's code tools are using every sandbox worker they may hold: "
                "try again shortly."
            )
        try:
            return await self._open_session()
        except BaseException:
            let_go(self.tenant)
            raise

    async def _open_session(self) -> Any:
        pool = await get_pool()
        session = pool.checkout(
            script_name="main.py",
            limits=self.limits.monty(),
            os_policy={"sleep_system_max": max(0.001, min(10.0, self.limits.wall_seconds))},
        )
        try:
            await session.__aenter__()
        except TimeoutError:
            raise ToolError(
                "The code sandbox is busy (every worker is running code): try again shortly."
            ) from None
        self.session = session
        lower_priority(session.worker_pid)
        return session

    async def _release(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            try:
                with contextlib.suppress(MontyError, OSError, RuntimeError):
                    await session.__aexit__(None, None, None)
            finally:
                let_go(self.tenant)

    async def _timed(self, awaitable: Awaitable[Any]) -> Any:
        """Await sandbox work or a host call within the wall-time budget left."""
        left = self.wall_left()
        started = time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            async with asyncio.timeout(left):
                return await awaitable
        except TimeoutError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            raise LimitExceeded("wall time limit", f"{self.limits.wall_seconds:g} s") from None
        finally:
            self.spent += time.monotonic() - started

    # -- the run ----------------------------------------------------------------------------------

    async def execute(self, source: str, info: dict[str, Any]) -> Any:
        try:
            session = await self._checkout()
            snap = await self._timed(
                session.feed_start(
                    source,
                    inputs={"args": self.arguments, "_getmcp_info": info},
                    print_callback=self.prints,
                )
            )
            while not isinstance(snap, MontyComplete):
                snap = await self._answer(snap)
            return snap.output
        except MontyError as exc:
            raise self._explain(exc) from None
        finally:
            await self._release()

    async def _answer(self, snap: Any) -> Any:
        if isinstance(snap, AsyncNameLookupSnapshot):
            name = snap.variable_name
            if name == "secrets":
                return await self._timed(snap.resume(value=dict(self.secrets)))
            if name == "connections":
                return await self._timed(snap.resume(value=dict(self.connections)))
            if name in LOOKUPS:
                return await self._timed(snap.resume(value=LOOKUPS[name]))
            return await self._timed(snap.resume())  # NameError, raised where the code is
        if isinstance(snap, AsyncFutureSnapshot):
            # Only Monty's own pending work (gathered sleeps) can be left to settle here.
            return await self._timed(snap.resume_auto())
        self._count(snap.function_name)
        if snap.is_os_function:
            if "sleep" in str(snap.function_name):
                return await self._answer_sleep(snap)
            return await self._timed(snap.resume_auto())  # Monty's default answer
        name, args, kwargs = snap.function_name, snap.args, snap.kwargs
        if name not in FUNCTIONS:
            message = f"name {name!r} is not defined"
            return await self._reply(snap, raised("NameError", message))
        record = describe(name, args, kwargs, self.masker) if self.trace is not None else None
        started = time.perf_counter()
        outcome: dict[str, Any] = {}
        try:
            if name in CLIENT_WAITS:
                # A nested call is work done for this call: its time counts; a person's is not.
                timed = name == "call_tool"
                call = functools.partial(self._host_call, name, args, kwargs, timed=timed)
                outcome, snap = await self._parked(snap, call)
            else:
                outcome = await self._host_call(name, args, kwargs, timed=True)
        except Exception as exc:  # the call ends here (no client, a limit): still listed
            outcome = {"exc_type": type(exc).__name__, "message": str(exc)}
            raise
        finally:
            if record is not None:
                record["ms"] = round((time.perf_counter() - started) * 1000, 1)
                if "exc_type" in outcome:
                    error = f"{outcome['exc_type']}: {outcome['message']}"
                    record["error"] = self.masker.mask(error)
                if self.trace is not None:
                    self.trace.append(record)
        return await self._reply(snap, outcome)

    async def _answer_sleep(self, snap: Any) -> Any:
        """time.sleep / asyncio.sleep: parked, unless too short to be worth it."""
        seconds = snap.args[0] if snap.args and isinstance(snap.args[0], int | float) else 0
        seconds = max(0.0, float(seconds))
        if seconds < PARK_SLEEPS_FROM_SECONDS:
            return await self._reply(snap, await self._sleep(seconds))
        outcome, restored = await self._parked(snap, functools.partial(self._sleep, seconds))
        return await self._reply(restored, outcome)

    async def _sleep(self, seconds: float) -> dict[str, Any]:
        """time.sleep / asyncio.sleep: waited here, within the wall time left."""
        await self._timed(asyncio.sleep(min(seconds, self.wall_left() + 0.01)))
        return {"return_value": None}

    def _count(self, name: str) -> None:
        self.host_calls += 1
        if self.host_calls > self.limits.host_calls:
            raise LimitExceeded("host call limit", f"{self.limits.host_calls} calls")

    async def _host_call(self, name: str, args: Any, kwargs: Any, *, timed: bool) -> dict[str, Any]:
        """The outcome the sandbox resumes with: the value, or an exception the code can catch.
        Only what ends the call itself goes up: a breached limit or a client that cannot
        answer (ToolError), a protocol answer (McpError), a stateless-era question
        (InputRequired), a cancellation."""
        try:
            call = self.host.call(name, args, kwargs)
            value = await (self._timed(call) if timed else call)
        except SandboxException as exc:
            return raised(exc.exc_type, exc.message)
        except (TypeError, ValueError) as exc:  # arguments the host function cannot take
            return raised(type(exc).__name__, self.masker.mask(f"{name}(): {exc}"))
        except ENDS_THE_CALL:
            raise
        except Exception as exc:
            # A failure of getmcp's side (the state store away, a bug): the code may still
            # catch it and carry on; the details stay in the log.
            log.warning("code tool %s: host call %s failed", self.tool.name, name, exc_info=True)
            return raised("RuntimeError", f"{name}() failed in getmcp ({type(exc).__name__}).")
        return {"return_value": value}

    async def _parked(
        self, snap: Any, waiting: Callable[[], Awaitable[dict[str, Any]]]
    ) -> tuple[dict[str, Any], Any]:
        """Dump the sandbox and free its worker while `waiting()` runs (the client answers, a
        nested tool works, the code sleeps); then take a worker again and restore it there."""
        blob = snap.dump()
        await self._release()
        outcome = await waiting()
        session = await self._checkout()
        restored = await self._timed(session.load_snapshot(blob, print_callback=self.prints))
        return outcome, restored

    async def _reply(self, snap: Any, outcome: dict[str, Any]) -> Any:
        if snap.allow_eager_await:
            # `await fetch(...)`: the sandbox wants an awaitable; settle it at once.
            pending = await self._timed(snap.resume({"future": ...}))
            if (
                isinstance(pending, AsyncFutureSnapshot)
                and snap.call_id in pending.pending_call_ids
            ):
                return await self._timed(pending.resume({snap.call_id: cast(Any, outcome)}))
            return pending
        return await self._timed(snap.resume(outcome))

    def _traceback(self, exc: MontyRuntimeError) -> str:
        """Python's traceback shape, with the lines of the tool's own source only (not the
        driver appended after it)."""
        lines = ["Traceback (most recent call last):"]
        for frame in exc.traceback():
            if frame.line > self.tool.user_lines:
                continue
            lines.append(
                f'  File "main.py", line {frame.line}, in {frame.function_name or "<module>"}'
            )
            if frame.source_line:
                lines.append(f"    {frame.source_line.strip()}")
        lines.append(exc.display("type-msg"))
        return "\n".join(lines)

    # -- errors -----------------------------------------------------------------------------------

    def _explain(self, exc: MontyError) -> ToolError:
        limits = self.limits
        if isinstance(exc, MontyCrashedError):
            if exc.timed_out:
                return LimitExceeded("wall time limit", f"{limits.wall_seconds:g} s")
            return ToolError(
                "The code sandbox worker crashed; this call failed and the worker was replaced. "
                "Try again, and simplify the code if it happens again."
            )
        if isinstance(exc, MontySyntaxError):
            return ToolError(self.masker.mask(f"The code does not parse: {exc.display()}"))
        if isinstance(exc, MontyRuntimeError):
            kind = exc.display("type-msg")
            message = exc.display("msg")
            if kind.startswith("TimeoutError") and "feed time limit" in message:
                return LimitExceeded("CPU time limit", f"{limits.cpu_seconds:g} s")
            if kind.startswith("TimeoutError") and "sleep" in message:
                return LimitExceeded("wall time limit", f"{limits.wall_seconds:g} s")
            if kind.startswith("MemoryError") and OUTPUT_BREACH in message:
                return LimitExceeded("output limit", f"{limits.output_bytes} bytes")
            if kind.startswith("MemoryError") and "limit exceeded" in message:
                if message.rstrip().endswith(f"> {limits.output_bytes} bytes"):
                    return LimitExceeded("output limit", f"{limits.output_bytes} bytes printed")
                return LimitExceeded("memory limit", f"{limits.memory_mb} MB")
            if kind.startswith("RecursionError"):
                return LimitExceeded("recursion limit", f"depth {limits.recursion_depth}")
            if kind.startswith("RuntimeError") and "suspension" in message.lower():
                return LimitExceeded("host call limit", f"{limits.host_calls} calls")
            return ToolError(self.masker.mask(f"The code raised an error:\n{self._traceback(exc)}"))
        return ToolError(self.masker.mask(f"The code sandbox failed: {exc}"))
