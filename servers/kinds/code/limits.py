"""Per-call limits of a code tool: the tool's `config.limits` over the server's `code.limits`
over the defaults, capped by the platform maximums.

| key            | meaning                                                   | default | maximum (setting)        |
| -------------- | --------------------------------------------------------- | ------- | ------------------------ |
| wallSeconds    | the whole call, host calls included, client answers not   | 30      | CODE_MAX_WALL_SECONDS    |
| cpuSeconds     | time the interpreter itself runs (the sandbox's clock)    | 5       | CODE_MAX_CPU_SECONDS     |
| memoryMb       | the sandbox heap                                          | 64      | CODE_MAX_MEMORY_MB       |
| outputBytes    | the result, and separately everything printed            | 262144  | CODE_MAX_OUTPUT_BYTES    |
| hostCalls      | fetch, log, progress, elicit, sample, call_tool, sleeps   | 50      | CODE_MAX_HOST_CALLS      |
| recursionDepth | nested Python calls inside the sandbox                    | 200     | 1000                     |

Monty 1.4 counts no allocations of its own: the heap limit is what stops allocation bombs.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from pydantic_monty import ResourceLimits

# key: (default, settings name of the maximum or a fixed maximum, integer?)
LIMITS = {
    "wallSeconds": (30.0, "CODE_MAX_WALL_SECONDS", False),
    "cpuSeconds": (5.0, "CODE_MAX_CPU_SECONDS", False),
    "memoryMb": (64, "CODE_MAX_MEMORY_MB", True),
    "outputBytes": (256 * 1024, "CODE_MAX_OUTPUT_BYTES", True),
    "hostCalls": (50, "CODE_MAX_HOST_CALLS", True),
    "recursionDepth": (200, 1000, True),
}


def maximum(key: str) -> int | float:
    source = LIMITS[key][1]
    if isinstance(source, int):
        return source
    value: int | float = getattr(settings, str(source))
    return value


def validate_limits(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    errors = []
    for key, item in value.items():
        if key not in LIMITS:
            errors.append(f"{path}.{key}: unknown limit (known: {', '.join(LIMITS)})")
            continue
        integer = LIMITS[key][2]
        kinds = int if integer else int | float
        if isinstance(item, bool) or not isinstance(item, kinds) or item <= 0:
            what = "a whole number" if integer else "a number"
            errors.append(f"{path}.{key}: must be {what} above 0")
        elif item > maximum(key):
            errors.append(f"{path}.{key}: at most {maximum(key)} on this platform")
    return errors


def validate_server_settings(value: Any, path: str = "code") -> list[str]:
    """The server's `code` settings: only `limits` so far."""
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    errors = validate_limits(value.get("limits"), f"{path}.limits")
    errors.extend(f"{path}.{key}: unknown field" for key in sorted(set(value) - {"limits"}))
    return errors


@dataclass(frozen=True, slots=True)
class Limits:
    wall_seconds: float
    cpu_seconds: float
    memory_mb: int
    output_bytes: int
    host_calls: int
    recursion_depth: int

    @classmethod
    def from_config(
        cls, value: dict[str, Any] | None, server: dict[str, Any] | None = None
    ) -> "Limits":
        value = {**(server or {}), **(value or {})}
        chosen = {}
        for key, (default, _, _) in LIMITS.items():
            # A platform maximum lowered after the tool was saved still wins.
            chosen[key] = min(value.get(key, default), maximum(key))
        return cls(
            wall_seconds=float(chosen["wallSeconds"]),
            cpu_seconds=float(chosen["cpuSeconds"]),
            memory_mb=int(chosen["memoryMb"]),
            output_bytes=int(chosen["outputBytes"]),
            host_calls=int(chosen["hostCalls"]),
            recursion_depth=int(chosen["recursionDepth"]),
        )

    def monty(self) -> ResourceLimits:
        """The limits the sandbox worker enforces itself."""
        return {
            "max_feed_duration_secs": self.cpu_seconds,
            "max_memory": self.memory_mb * 1024 * 1024,
            "max_recursion_depth": self.recursion_depth,
            # The driver counts host calls itself; this is the pool's backstop (sleeps count too).
            "max_suspensions": self.host_calls + 10,
            "max_total_sleep_secs": self.wall_seconds,
        }
