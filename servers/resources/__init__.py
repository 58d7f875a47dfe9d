"""Resource kinds whose content is not stored in the definition: each module validates its
config, compiles it once and reads the content on every resources/read.

    def validate_config(config: dict, path: str = "config") -> list[str]
    def compile(resource_def: dict) -> object        # resource_def["_server"]: id, organizationId
    async def read(compiled, uri: str, ctx) -> list[dict]   # resources/read `contents`

`static` (the default) is no module: its text or blob is compiled into the snapshot as it is.
A read that cannot be served raises McpError(-32603) with a message safe to show.
"""

from types import ModuleType

from ..views import kind as view
from . import fetched, upstream

STATIC = "static"
# `view`: a tool's view as an MCP App (servers.views), made by the compiler from `tools[].view`.
KINDS: dict[str, ModuleType] = {"fetched": fetched, "upstream": upstream, "view": view}


def is_stored(name: str) -> bool:
    """Whether a resource of this kind is stored in the definition as it is served (static)."""
    return name == STATIC


def runtime_kind(name: str) -> ModuleType | None:
    """The module serving kind `name` on each request; None for the stored kind, ValueError for
    an unknown name."""
    return None if is_stored(name) else get_kind(name)


def get_kind(name: str) -> ModuleType:
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted([STATIC, *KINDS]))
        raise ValueError(f"Unknown resource kind {name!r} (known kinds: {known})") from None
