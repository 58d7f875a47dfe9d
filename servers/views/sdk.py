"""The official MCP Apps SDK (app side), vendored by `make assets` (scripts/assets.sh) at a pinned
version, as a script every view document carries inline.

Hosts render a view from its HTML alone, under a policy that by default lets no script in from
anywhere, so the SDK travels inside the document. The published bundle is an ES module ending in
one `export{local as Name,...}`; that statement becomes `const McpApps = {Name: local, ...}` so
the view's own code, in the same module script, reaches the SDK as `McpApps.App`. The file is
read once per process and shared by every view (servers.views.kind joins it in on each read)."""

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings

SDK_PATH = Path("static") / "vendor" / "ext-apps" / "app-with-deps.js"
_EXPORT = re.compile(r"export\s*\{([^{}]*)\}\s*;?\s*$")
_SCRIPT_END = re.compile(r"</script", re.IGNORECASE)
_EXPORT_ITEM = re.compile(r"^\s*([\w$]+)(?:\s+as\s+([\w$]+))?\s*$")


class SdkMissing(Exception):
    """The SDK is not installed (run `make assets`) or its bundle is not the shape expected."""


def as_script(source: str) -> str:
    """The bundle with its final export turned into the `McpApps` constant."""
    # The export is the bundle's last statement: only its tail is searched.
    offset = max(0, len(source) - 20_000)
    match = _EXPORT.search(source, offset)
    if match is None:
        raise SdkMissing("the MCP Apps SDK bundle does not end in an export statement")
    pairs = []
    for item in match.group(1).split(","):
        parsed = _EXPORT_ITEM.match(item)
        if parsed is None:
            raise SdkMissing(f"unexpected export in the MCP Apps SDK bundle: {item.strip()!r}")
        local, name = parsed.group(1), parsed.group(2) or parsed.group(1)
        pairs.append(f"{name}:{local}")
    if _SCRIPT_END.search(source):
        raise SdkMissing("the MCP Apps SDK bundle contains </script and cannot be inlined")
    return source[: match.start()] + "const McpApps={" + ",".join(pairs) + "};"


@lru_cache(maxsize=1)
def sdk_script() -> str:
    path = Path(settings.BASE_DIR) / SDK_PATH
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        raise SdkMissing(f"{SDK_PATH} is missing: run `make assets`") from None
    return as_script(source)
