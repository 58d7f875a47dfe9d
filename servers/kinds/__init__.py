"""Tool kinds: each module validates its config, compiles it once and runs calls on it."""

from types import ModuleType

from . import code, http, static, upstream, workflow

KINDS: dict[str, ModuleType] = {
    "static": static,
    "workflow": workflow,
    "http": http,
    "upstream": upstream,
    "code": code,
}


def get_kind(name: str) -> ModuleType:
    try:
        return KINDS[name]
    except KeyError:
        known = ", ".join(sorted(KINDS))
        raise ValueError(f"Unknown tool kind {name!r} (known kinds: {known})") from None
