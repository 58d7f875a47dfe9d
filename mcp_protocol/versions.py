"""MCP protocol revisions and what differs between them."""

SESSION_ERA = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS = "2026-07-28"
SUPPORTED = (*SESSION_ERA, STATELESS)
LATEST_SESSION_ERA = "2025-11-25"
# Clients that send no MCP-Protocol-Version header after initialize are assumed to speak this.
ASSUMED_WITHOUT_HEADER = "2025-03-26"


def negotiate(requested: str | None) -> str:
    """The version to answer an initialize with: the requested one if we speak it, else our latest."""
    if requested in SESSION_ERA:
        return requested
    return LATEST_SESSION_ERA


def is_supported(version: str) -> bool:
    return version in SUPPORTED


# Revision names are dates, so they compare in time order as strings; only this module does so.
def at_least(version: str, revision: str) -> bool:
    """Whether `version` is `revision` or a later one."""
    return version >= revision


def allows_batches(version: str) -> bool:
    return version == "2025-03-26"


def has_sse_polling(version: str) -> bool:
    """2025-11-25 added priming events and server-initiated disconnects with `retry`."""
    return at_least(version, "2025-11-25")


# The revision that made tasks (tasks/get, tasks/result, ...) part of the core protocol; the
# stateless revision moved them to an extension with another wire shape.
TASKS_IN_CORE = "2025-11-25"


def has_core_tasks(version: str) -> bool:
    return at_least(version, TASKS_IN_CORE)


def missing_resource_is_invalid_params(version: str) -> bool:
    """From 2026-07-28 a missing resource is -32602 (invalid params) instead of -32002."""
    return at_least(version, STATELESS)
