"""Tool kinds: each declares its contract (contract.py: what it needs and can do), validates its
config, compiles it once and runs calls on it. KINDS is the one registry of them."""

from . import code, http, static, upstream, workflow
from .code.kind import KIND as CODE
from .contract import TemplateScope, ToolKind
from .http.kind import KIND as HTTP
from .workflow.kind import KIND as WORKFLOW

# In the order the dashboard offers them: static first, as the empty state suggests.
KINDS: dict[str, ToolKind] = {
    kind.name: kind for kind in (static.KIND, WORKFLOW, HTTP, upstream.KIND, CODE)
}
# The kind of a tool definition that names none.
DEFAULT_KIND = static.KIND.name


def get_kind(name: str) -> ToolKind:
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted(KINDS))
        raise ValueError(f"Unknown tool kind {name!r} (known kinds: {known})") from None


def find_kind(name: object) -> ToolKind | None:
    """The kind called `name`, or None for an unknown name (or a value that is no name)."""
    return KINDS.get(name) if isinstance(name, str) else None


__all__ = [
    "DEFAULT_KIND",
    "KINDS",
    "TemplateScope",
    "ToolKind",
    "code",
    "find_kind",
    "get_kind",
    "http",
    "static",
    "upstream",
    "workflow",
]
