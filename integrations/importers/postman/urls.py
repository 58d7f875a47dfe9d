"""A request's URL (Postman's object or a raw string) turned into the tool's URL template:
`:name` path segments and lone unset `{{variables}}` become path arguments, query entries
become query arguments."""

from typing import Any

from ..preview import Argument, identifier, unique
from .entries import description, pairs
from .variables import WHOLE_VARIABLE, Variables


def url_template(variables: Variables, url, arguments, taken, problems) -> str:
    if isinstance(url, str):
        url = _split_raw_url(url)
    if not isinstance(url, dict):
        problems.append("url: missing")
        return ""
    if url.get("host") is None and url.get("raw"):
        url = {**_split_raw_url(url["raw"]), **{k: v for k, v in url.items() if k != "raw"}}
    host = url.get("host")
    host = ".".join(map(str, host)) if isinstance(host, list) else str(host or "")
    protocol = url.get("protocol")
    base = variables.render(host, problems, "url")
    if protocol and "://" not in base:
        base = f"{protocol}://{base}"
    if url.get("port"):
        base += f":{url['port']}"
    if "://" not in base:
        problems.append(f"url: {base or '(empty)'} is not absolute; set the base URL variable")
    path_values = {
        str(v["key"]): v for v in url.get("variable") or [] if isinstance(v, dict) and v.get("key")
    }
    segments = []
    path = url.get("path") or []
    for segment in path if isinstance(path, list) else str(path).strip("/").split("/"):
        segment = str(segment.get("value", "")) if isinstance(segment, dict) else str(segment)
        if segment.startswith(":") and len(segment) > 1:
            wire = segment[1:]
            var = path_values.get(wire, {})
            schema: dict[str, Any] = {"type": "string"}
            if var.get("value") not in (None, ""):
                schema["examples"] = [str(var["value"])]
            arg = Argument(
                name=unique(identifier(wire), taken),
                location="path",
                wire_name=wire,
                schema=schema,
                required=True,
                description=description(var.get("description")),
            )
            arguments.append(arg)
            segments.append("{" + arg.name + "}")
            continue
        whole = WHOLE_VARIABLE.match(segment)
        if (
            whole
            and not variables.values.get(whole.group(1))
            and not variables.is_secret(whole.group(1))
        ):
            arg = Argument(
                name=unique(identifier(whole.group(1)), taken),
                location="path",
                wire_name=whole.group(1),
                schema={"type": "string"},
                required=True,
                description=f"Postman variable {{{{{whole.group(1)}}}}}.",
            )
            arguments.append(arg)
            segments.append("{" + arg.name + "}")
            continue
        segments.append(variables.render(segment, problems, "url"))
    full = base.rstrip("/") + ("/" + "/".join(segments) if segments else "")
    for param in pairs(url.get("query")):
        where = f"query {param['key']}"
        arguments.append(variables.entry_argument(param, "query", taken, problems, where))
    return full


def _split_raw_url(raw: str) -> dict:
    """Postman's own split of a raw URL string into host, path and query."""
    raw = raw.strip()
    protocol = None
    if "://" in raw:
        protocol, raw = raw.split("://", 1)
    raw, _, query = raw.partition("?")
    host, _, path = raw.partition("/")
    parsed: dict = {"host": [host], "path": [p for p in path.split("/") if p != ""]}
    if protocol:
        parsed["protocol"] = protocol
    if query:
        parsed["query"] = [
            {"key": k, "value": v}
            for k, _, v in (pair.partition("=") for pair in query.split("&") if pair)
        ]
    return parsed
