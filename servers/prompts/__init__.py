"""Prompt kinds whose messages are not stored in the definition: each module validates its
config, compiles it once and produces the messages on every prompts/get.

    def validate_config(config: dict, path: str = "config") -> list[str]
    def compile(prompt_def: dict) -> object        # prompt_def["_server"]: id, organizationId
    async def get(compiled, arguments: dict, ctx) -> dict   # a GetPromptResult dict

`static` (the default) is no module: its messages are jinja templates compiled into the
snapshot. A prompt that cannot be served raises McpError with a message safe to show.
"""

from types import ModuleType

from . import upstream

STATIC = "static"
KINDS: dict[str, ModuleType] = {"upstream": upstream}


def is_stored(name: str) -> bool:
    """Whether a prompt of this kind is stored in the definition as it is served (static)."""
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
        raise ValueError(f"Unknown prompt kind {name!r} (known kinds: {known})") from None
