"""The tool name of an operation: its operationId as it is when that is a valid name, else one
made from the method and the path's words (`get_pets_by_petId`)."""

import re

from ..preview import snake, tool_name, unique

PATH_TEMPLATE = re.compile(r"\{([^{}]+)\}")


def operation_name(path, method, op, taken, problems) -> tuple[str, str | None]:
    """(the tool's name, unique among `taken`; the operationId or None)."""
    operation_id = op.get("operationId") if isinstance(op.get("operationId"), str) else None
    raw_name = operation_id or f"{method}_{_path_words(path)}"
    name = unique(tool_name(snake(raw_name) if not operation_id else raw_name), taken)
    if operation_id and name != operation_id:
        problems.append(f"tool name {name!r} differs from operationId {operation_id!r}")
    return name, operation_id


def _path_words(path: str) -> str:
    words = []
    for segment in path.strip("/").split("/"):
        match = PATH_TEMPLATE.fullmatch(segment)
        words.append(f"by_{match.group(1)}" if match else segment)
    return "_".join(words) or "root"
