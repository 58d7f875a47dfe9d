"""The digest an approval of a tool's secret reach names (servers/secret_reach.py): of the
tool's kind and the part of its config that decides what its calls do with the secrets they
read. Its own module, importing no kind, so that the upstream package can check approvals
without an import circle (the upstream kind imports that package)."""

import hashlib
from typing import Any

import orjson


def config_digest(kind: str, config: Any) -> str:
    text = orjson.dumps({"kind": kind, "config": config}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(text).hexdigest()


def upstream_reach_config(config: dict[str, Any]) -> dict[str, Any]:
    """An upstream tool's: all but `synced`, what the upstream said at the last refresh, which
    moves by itself and sends nothing anywhere."""
    return {key: value for key, value in config.items() if key != "synced"}
