"""The four agent settings of a server and the two of a tool: defaults, validation, reading.

Definition format (docs/architecture.md):

    agents:
      discovery: {mode: auto, threshold: 40}          # auto | on | off
      outputBudget: {maxChars: 0, maxTokens: 25000, ttlSeconds: 3600}   # 0: no limit
      longCalls: {waitSeconds: 50}                    # 0: clients without Tasks never wait
      codeMode: {enabled: false, limits: {cpuSeconds: 5}}   # gateway/agents/codemode.py
    tools:
      - name: ...
        pinned: true                                  # listed directly even under discovery
        outputBudget: {maxChars: 20000, maxTokens: 5000}   # over the server's (the smaller wins)
"""

import functools
from dataclasses import dataclass

from servers.kinds.code.limits import validate_limits

DISCOVERY_MODES = ("auto", "on", "off")
DEFAULT_THRESHOLD = 40
DEFAULT_MAX_CHARS = 0
# Claude Code cuts a tool result at 25k tokens; a result past it is useless to the model.
DEFAULT_MAX_TOKENS = 25_000
DEFAULT_TTL_SECONDS = 3600
DEFAULT_WAIT_SECONDS = 50
MAX_THRESHOLD = 10_000
MAX_BUDGET_CHARS = 10_000_000
MAX_TTL_SECONDS = 7 * 24 * 3600
MAX_WAIT_SECONDS = 600
# A token is about four characters of English or JSON; no tokenizer is loaded for an estimate.
CHARS_PER_TOKEN = 4

SERVER_KEYS = {
    "discovery": {"mode", "threshold"},
    "outputBudget": {"maxChars", "maxTokens", "ttlSeconds"},
    "longCalls": {"waitSeconds"},
    "codeMode": {"enabled", "limits"},
}
TOOL_BUDGET_KEYS = {"maxChars", "maxTokens"}


@dataclass(frozen=True, slots=True)
class AgentSettings:
    discovery_mode: str = "auto"
    discovery_threshold: int = DEFAULT_THRESHOLD
    max_chars: int = DEFAULT_MAX_CHARS
    max_tokens: int = DEFAULT_MAX_TOKENS
    ttl_seconds: int = DEFAULT_TTL_SECONDS
    wait_seconds: int = DEFAULT_WAIT_SECONDS
    # The code-mode meta-tool (codemode.py): off unless the server turns it on; its limits as
    # (key, value) pairs of a code tool's `limits` (hashable, so settings stay shared).
    code_mode: bool = False
    code_mode_limits: tuple[tuple[str, int | float], ...] = ()


def _whole(value, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _mapping(value: dict, key: str) -> dict:
    """value[key] when it is a mapping; {} when it is missing or anything else."""
    item = value.get(key)
    return item if isinstance(item, dict) else {}


def validate_server(value, path: str = "agents") -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    errors = []
    for key, item in value.items():
        if key not in SERVER_KEYS:
            errors.append(f"{path}.{key}: unknown field")
            continue
        if not isinstance(item, dict):
            errors.append(f"{path}.{key}: must be a mapping")
            continue
        errors += [f"{path}.{key}.{k}: unknown field" for k in item if k not in SERVER_KEYS[key]]
    discovery = _mapping(value, "discovery")
    if "mode" in discovery and discovery["mode"] not in DISCOVERY_MODES:
        errors.append(f"{path}.discovery.mode: must be one of auto, on, off")
    if "threshold" in discovery and not _whole(discovery["threshold"], 1, MAX_THRESHOLD):
        errors.append(
            f"{path}.discovery.threshold: must be a whole number from 1 to {MAX_THRESHOLD}"
        )
    budget = _mapping(value, "outputBudget")
    errors += _budget_errors(budget, f"{path}.outputBudget")
    if "ttlSeconds" in budget and not _whole(budget["ttlSeconds"], 60, MAX_TTL_SECONDS):
        errors.append(
            f"{path}.outputBudget.ttlSeconds: must be a whole number from 60 to {MAX_TTL_SECONDS}"
        )
    calls = _mapping(value, "longCalls")
    if "waitSeconds" in calls and not _whole(calls["waitSeconds"], 0, MAX_WAIT_SECONDS):
        errors.append(
            f"{path}.longCalls.waitSeconds: must be a whole number from 0 to {MAX_WAIT_SECONDS}"
        )
    code_mode = _mapping(value, "codeMode")
    if "enabled" in code_mode and not isinstance(code_mode["enabled"], bool):
        errors.append(f"{path}.codeMode.enabled: must be true or false")
    errors += validate_limits(code_mode.get("limits"), f"{path}.codeMode.limits")
    return errors


def _budget_errors(budget: dict, path: str) -> list[str]:
    errors = []
    if "maxChars" in budget and not _whole(budget["maxChars"], 0, MAX_BUDGET_CHARS):
        errors.append(f"{path}.maxChars: must be a whole number from 0 (no limit) to 10000000")
    limit = MAX_BUDGET_CHARS // CHARS_PER_TOKEN
    if "maxTokens" in budget and not _whole(budget["maxTokens"], 0, limit):
        errors.append(f"{path}.maxTokens: must be a whole number from 0 (no limit) to {limit}")
    return errors


def validate_tool_budget(value, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: must be a mapping"]
    errors = [f"{path}.{k}: unknown field" for k in value if k not in TOOL_BUDGET_KEYS]
    return errors + _budget_errors(value, path)


def read(value) -> AgentSettings:
    """The settings of a (validated) `agents` mapping; missing values take their defaults."""
    value = value if isinstance(value, dict) else {}
    discovery = value.get("discovery") or {}
    budget = value.get("outputBudget") or {}
    calls = value.get("longCalls") or {}
    code_mode = value.get("codeMode") or {}
    return _shared(
        AgentSettings(
            discovery_mode=discovery.get("mode", "auto"),
            discovery_threshold=int(discovery.get("threshold", DEFAULT_THRESHOLD)),
            max_chars=int(budget.get("maxChars", DEFAULT_MAX_CHARS)),
            max_tokens=int(budget.get("maxTokens", DEFAULT_MAX_TOKENS)),
            ttl_seconds=int(budget.get("ttlSeconds", DEFAULT_TTL_SECONDS)),
            wait_seconds=int(calls.get("waitSeconds", DEFAULT_WAIT_SECONDS)),
            code_mode=code_mode.get("enabled") is True,
            code_mode_limits=tuple(sorted((code_mode.get("limits") or {}).items())),
        )
    )


@functools.lru_cache(maxsize=256)
def _shared(settings: AgentSettings) -> AgentSettings:
    """One instance per distinct value (most servers keep the defaults), shared by every snapshot
    that has it: each call reads them, and one copy stays in the CPU's caches."""
    return settings


def char_limit(max_chars: int, max_tokens: int) -> int:
    """The characters a budget allows (0: no limit): the smaller of its two bounds."""
    bounds = [b for b in (max_chars, max_tokens * CHARS_PER_TOKEN) if b > 0]
    return min(bounds) if bounds else 0


def estimate_tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def discovery_active(snapshot) -> bool:
    """Whether the snapshot lists meta-tools instead of its tools (mode `on`, or `auto` above
    the threshold): what the gateway serves, and what decides whether a server is searched."""
    settings = snapshot.agents
    if settings.discovery_mode == "on":
        return True
    if settings.discovery_mode == "off":
        return False
    return len(snapshot.tools) > settings.discovery_threshold
