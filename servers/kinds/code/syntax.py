"""The syntax check a save runs: Monty's own parser, in a sandbox worker subprocess.

The source is wrapped in a function that is never called, so nothing of it runs: the worker
only parses. Results are cached by the source's digest (a server's other code tools are
checked again on every save of the definition). The check runs in the saving thread (dashboard,
REST API, import: synchronous code); the worker is bounded by its limits and the pool's
request timeout, and a worker killed by it is a clear error, never a hung save.
"""

import functools
import hashlib
import os
import threading

from pydantic_monty import Monty, MontyCrashedError, MontyError, MontySyntaxError, ResourceLimits

CHECK_LIMITS: ResourceLimits = {"max_feed_duration_secs": 1.0, "max_memory": 64 * 1024 * 1024}
REQUEST_TIMEOUT_SECONDS = 2.0
WRAPPER = "def _getmcp_syntax_check():\n"
INDENT = "    "

_lock = threading.Lock()
_pool: Monty | None = None
_pid: int | None = None


def _get_pool() -> Monty:
    global _pool, _pid
    with _lock:
        if _pool is None or _pid != os.getpid():
            _pool = Monty(min_processes=0, max_processes=1, request_timeout=REQUEST_TIMEOUT_SECONDS)
            _pool.__enter__()
            _pid = os.getpid()
        return _pool


def _wrapped(source: str) -> str:
    lines = source.splitlines(keepends=True)
    return WRAPPER + "".join(INDENT + line if line.strip() else line for line in lines) + "\n"


def errors(source: str) -> list[str]:
    return list(_errors(hashlib.sha256(source.encode()).hexdigest(), source))


@functools.lru_cache(maxsize=512)
def _errors(digest: str, source: str) -> tuple[str, ...]:
    user_lines = source.count("\n") + (0 if source.endswith("\n") else 1)
    try:
        with _get_pool().checkout(limits=CHECK_LIMITS) as session:
            # A snippet that only defines a function: parsed, not run.
            session.feed_run(_wrapped(source), print_callback=lambda stream, text: None)
    except MontySyntaxError as exc:
        frames = exc.traceback()
        message = exc.display("msg")
        if not frames:
            return (message,)
        line = min(max(frames[-1].line - 1, 1), max(user_lines, 1))
        column = max(frames[-1].column - len(INDENT), 1)
        return (f"line {line}, column {column}: {message}",)
    except MontyCrashedError:
        return ("could not be checked in time: simplify it",)
    except MontyError as exc:
        # Monty refuses some syntax it parses (yield, for one) with a runtime error at parse.
        message = exc.display("type-msg") if hasattr(exc, "display") else str(exc)
        return (message,)
    return ()
