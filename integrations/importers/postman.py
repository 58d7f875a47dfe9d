"""Postman Collection 2.1 documents turned into a preview of `http` tools.

Folders become name prefixes. A `{{variable}}` is replaced by its value when the collection (or
the `variables` given) has one; a variable that holds a credential becomes a secret placeholder;
any other variable without a value becomes an argument of the tool, since a person would have
typed it in Postman before sending.

One reader of one collection format, longer than most modules: its methods follow the
collection's own structure (folders, requests, URLs, bodies, auth, variables) and share the
reader's variable state, so it stays together.
"""

import copy
import re
from typing import Any

import orjson

from .mapping import http_config
from .preview import (
    Argument,
    ImportedOperation,
    ImportFailed,
    ImportPreview,
    annotations_for,
    argument_name,
    identifier,
    input_schema,
    secret_name,
    secret_placeholder,
    snake,
    tool_name,
    unique,
    validate_operations,
)
from .schemas import schema_problems
from .sources import load

_VARIABLE = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
_WHOLE_VARIABLE = re.compile(r"^\{\{\s*([^{}\s]+)\s*\}\}$")
_SECRET_WORDS = re.compile(r"token|secret|password|passwd|api[_-]?key|apikey|credential|auth", re.I)
_SENTINEL = "\u0000var:"
_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
# Set by the http kind from the body type; a copy in the config could only disagree with it.
_MANAGED_HEADERS = {"content-type", "content-length", "host"}


def parse_postman(
    source,
    *,
    variables: dict | None = None,
    secret_prefix: str | None = None,
    organization_id: int | None = None,
) -> ImportPreview:
    """Preview the requests of a Postman Collection v2.1 (v2.0 reads the same).

    `variables`: values for collection variables (an exported environment), overriding the
    collection's own. `secret_prefix`: first word of secret names (default: the collection name).
    """
    document, _origin = load(source, organization_id)
    return _Parser(document, variables or {}, secret_prefix).parse()


def _description(value) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return str(value or "").strip()


def _pairs(items) -> list[dict]:
    """Enabled key/value entries of a Postman list (headers, query, urlencoded...)."""
    return [
        item
        for item in items or []
        if isinstance(item, dict) and item.get("key") is not None and not item.get("disabled")
    ]


def _infer_schema(value) -> dict:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, list):
        items = _infer_schema(value[0]) if value else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _infer_schema(v) for k, v in value.items()}}
    if value is None:
        return {}
    return {"type": "string"}


class _Parser:
    def __init__(self, document: dict, overrides: dict, secret_prefix: str | None) -> None:
        info = document.get("info")
        if not isinstance(info, dict) or not isinstance(document.get("item"), list):
            raise ImportFailed("document: not a Postman collection (no `info` and `item` list)")
        schema = str(info.get("schema", ""))
        if schema and "collection" in schema and "v2." not in schema:
            raise ImportFailed(
                f"info.schema: {schema} is not supported (Postman Collection v2.1 is)"
            )
        self.doc = document
        self.title = str(info.get("name") or "Collection")
        self.version = str(
            (info.get("version") or "") if not isinstance(info.get("version"), dict) else ""
        )
        self.prefix = secret_prefix or self.title
        self.values: dict[str, str] = {}
        for var in document.get("variable") or []:
            if isinstance(var, dict) and var.get("key") and not var.get("disabled"):
                value = var.get("value")
                self.values[str(var["key"])] = "" if value is None else str(value)
        self.values.update({str(k): str(v) for k, v in overrides.items()})
        self.secret_variables: set[str] = set()
        self._find_auth_variables(document)
        self.secrets: list[str] = []
        self.auth_found: list[dict] = []
        self.problems: list[str] = []

    def _find_auth_variables(self, node) -> None:
        """Variables any auth block uses hold credentials, whatever they are called."""
        if isinstance(node, dict):
            for text in _auth_values(node.get("auth")):
                self.secret_variables.update(_VARIABLE.findall(text))
            for value in node.values():
                if isinstance(value, dict | list):
                    self._find_auth_variables(value)
        elif isinstance(node, list):
            for value in node:
                self._find_auth_variables(value)

    def is_secret(self, variable: str) -> bool:
        return variable in self.secret_variables or bool(_SECRET_WORDS.search(variable))

    def secret(self, variable: str) -> str:
        name = secret_name(self.prefix, variable)
        if name not in self.secrets:
            self.secrets.append(name)
        return secret_placeholder(name)

    def parse(self) -> ImportPreview:
        operations: list[ImportedOperation] = []
        taken: set[str] = set()
        self._walk(self.doc["item"], [], self.doc.get("auth"), operations, taken)
        if not operations:
            raise ImportFailed("item: the collection has no requests")
        bases = [op.config["url"] for op in operations]
        preview = ImportPreview(
            format="postman-2.1",
            title=self.title,
            version=self.version,
            base_url=_common_origin(bases),
            operations=operations,
            secrets=self.secrets,
            auth=self.auth_found,
            problems=self.problems,
        )
        validate_operations(preview)
        return preview

    def _walk(self, items, folders, inherited_auth, operations, taken) -> None:
        for item in items:
            if not isinstance(item, dict):
                continue
            auth = item.get("auth", inherited_auth)
            if isinstance(item.get("item"), list):  # a folder
                self._walk(
                    item["item"],
                    [*folders, str(item.get("name") or "folder")],
                    auth,
                    operations,
                    taken,
                )
            elif "request" in item:
                operations.append(self._operation(item, folders, auth, taken))

    # -- strings and variables -----------------------------------------------------------------

    def render(self, text: str, problems: list[str], where: str) -> str:
        """`text` with every variable that has a value replaced; secrets become placeholders."""

        def replace(match):
            variable = match.group(1)
            if self.is_secret(variable):
                return self.secret(variable)
            if variable.startswith("$"):
                problems.append(
                    f"{where}: Postman's dynamic variable {{{{{variable}}}}} is not supported; left out"
                )
                return ""
            if self.values.get(variable):
                return self.values[variable]
            problems.append(f"{where}: variable {{{{{variable}}}}} has no value; left out")
            return ""

        return _VARIABLE.sub(replace, text)

    def value_argument(
        self, raw, location, wire, taken, problems, where, description: str = ""
    ) -> Argument | str:
        """An argument for a value that is a lone unset variable; else the value rendered."""
        raw = "" if raw is None else str(raw)
        whole = _WHOLE_VARIABLE.match(raw)
        if whole and not self.is_secret(whole.group(1)) and not whole.group(1).startswith("$"):
            variable = whole.group(1)
            default = self.values.get(variable)
            schema = {"type": "string"}
            if default:
                schema["default"] = default
            return Argument(
                name=unique(argument_name(wire), taken),
                location=location,
                wire_name=wire,
                schema=schema,
                required=not default,
                description=description or f"Postman variable {{{{{variable}}}}}.",
            )
        return self.render(raw, problems, where)

    # -- one request ---------------------------------------------------------------------------

    def _operation(self, item, folders, auth, taken) -> ImportedOperation:
        request = item["request"]
        if isinstance(request, str):
            request = {"method": "GET", "url": request}
        name_raw = str(item.get("name") or "request")
        source = " / ".join([*folders, name_raw])
        problems: list[str] = []
        method = str(request.get("method") or "GET").upper()
        if method not in _METHODS:
            problems.append(f"method {method} is not supported; GET used")
            method = "GET"
        name = unique(
            tool_name("_".join(snake(p) for p in [*folders, name_raw] if snake(p))), taken
        )
        arguments: list[Argument] = []
        arg_taken: set[str] = set()
        url = self._url(request.get("url"), arguments, arg_taken, problems)
        headers = self._headers(request.get("header"), arguments, arg_taken, problems)
        body_type = self._body(request.get("body"), arguments, arg_taken, problems, headers)
        auth_settings = self._auth(request.get("auth", auth), problems)
        schema = input_schema(arguments)
        problems.extend(schema_problems(schema))
        description = _description(request.get("description")) or _description(
            item.get("description")
        )
        return ImportedOperation(
            name=name,
            source=source,
            operation_id=None,
            title=name_raw[:200],
            description=description or name_raw,
            method=method,
            input_schema=schema,
            config=http_config(
                method=method,
                url=url,
                arguments=arguments,
                auth=auth_settings,
                headers=headers,
                body_type=body_type,
                problems=problems,
            ),
            annotations=annotations_for(method),
            problems=problems,
            arguments=arguments,
        )

    def _url(self, url, arguments, taken, problems) -> str:
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
        base = self.render(host, problems, "url")
        if protocol and "://" not in base:
            base = f"{protocol}://{base}"
        if url.get("port"):
            base += f":{url['port']}"
        if "://" not in base:
            problems.append(f"url: {base or '(empty)'} is not absolute; set the base URL variable")
        path_values = {
            str(v["key"]): v
            for v in url.get("variable") or []
            if isinstance(v, dict) and v.get("key")
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
                    description=_description(var.get("description")),
                )
                arguments.append(arg)
                segments.append("{" + arg.name + "}")
                continue
            whole = _WHOLE_VARIABLE.match(segment)
            if whole and not self.values.get(whole.group(1)) and not self.is_secret(whole.group(1)):
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
            segments.append(self.render(segment, problems, "url"))
        full = base.rstrip("/") + ("/" + "/".join(segments) if segments else "")
        for param in _pairs(url.get("query")):
            wire = str(param["key"])
            value = self.value_argument(
                param.get("value"),
                "query",
                wire,
                taken,
                problems,
                f"query {wire}",
                _description(param.get("description")),
            )
            if isinstance(value, Argument):
                arguments.append(value)
            else:
                schema = {"type": "string"}
                if value:
                    schema["default"] = value
                arguments.append(
                    Argument(
                        name=unique(argument_name(wire), taken),
                        location="query",
                        wire_name=wire,
                        schema=schema,
                        description=_description(param.get("description")),
                    )
                )
        return full

    def _headers(self, headers, arguments, taken, problems) -> dict:
        constant = {}
        for header in _pairs(headers if isinstance(headers, list) else []):
            wire = str(header["key"])
            if wire.lower() in _MANAGED_HEADERS:
                continue
            value = self.value_argument(
                header.get("value"),
                "header",
                wire,
                taken,
                problems,
                f"header {wire}",
                _description(header.get("description")),
            )
            if isinstance(value, Argument):
                arguments.append(value)
            else:
                constant[wire] = value
        return constant

    def _body(self, body, arguments, taken, problems, headers) -> str | None:
        if not isinstance(body, dict) or body.get("disabled"):
            return None
        mode = body.get("mode")
        if mode in ("urlencoded", "formdata"):
            for field in _pairs(body.get(mode)):
                wire = str(field["key"])
                if field.get("type") == "file":
                    problems.append(f"form field {wire!r}: file uploads are sent as text")
                value = self.value_argument(
                    field.get("value"),
                    "form",
                    wire,
                    taken,
                    problems,
                    f"form field {wire}",
                    _description(field.get("description")),
                )
                if isinstance(value, Argument):
                    arguments.append(value)
                    continue
                schema = {"type": "string"}
                if value:
                    schema["default"] = value
                arguments.append(
                    Argument(
                        name=unique(argument_name(wire), taken),
                        location="form",
                        wire_name=wire,
                        schema=schema,
                        required=not value and field.get("type") != "file",
                        description=_description(field.get("description")),
                    )
                )
            return "form" if mode == "urlencoded" else "multipart"
        if mode == "raw":
            raw = str(body.get("raw") or "")
            if not raw.strip():
                return None
            parsed = _parse_json_template(raw)
            if isinstance(parsed, dict) and parsed:
                for key, value in parsed.items():
                    arguments.append(self._json_field(key, value, taken, problems))
                return "json"
            example = self._render_data(_strip_sentinels(parsed), problems, "body")
            if parsed is None:
                example = self.render(raw, problems, "body")
            arguments.append(
                Argument(
                    name=unique("body", taken),
                    location="body",
                    wire_name=None,
                    schema={**_infer_schema(example), "examples": [example]},
                    required=True,
                    description="The request body.",
                )
            )
            return "text" if parsed is None else "json"
        if mode == "graphql":
            graphql = body.get("graphql") or {}
            problems.append("body: a GraphQL body is sent as JSON {query, variables}")
            arguments.append(
                Argument(
                    name=unique("query", taken),
                    location="body",
                    wire_name="query",
                    schema={"type": "string", "default": str(graphql.get("query") or "")},
                    required=not graphql.get("query"),
                )
            )
            arguments.append(
                Argument(
                    name=unique("variables", taken),
                    location="body",
                    wire_name="variables",
                    schema={"type": "object"},
                )
            )
            return "json"
        if mode:
            problems.append(f"body: mode {mode!r} is not supported; no body is sent")
        return None

    def _json_field(self, key, value, taken, problems) -> Argument:
        if isinstance(value, str) and value.startswith(_SENTINEL):
            variable = value[len(_SENTINEL) :]
            default = self.values.get(variable)
            schema = {"type": "string"}
            if default:
                schema["default"] = default
            return Argument(
                name=unique(argument_name(key), taken),
                location="body",
                wire_name=key,
                schema=schema,
                required=not default,
                description=f"Postman variable {{{{{variable}}}}}.",
            )
        example = self._render_data(_strip_sentinels(value), problems, f"body field {key}")
        schema = _infer_schema(example)
        if example is not None:
            schema["default"] = example
        return Argument(
            name=unique(argument_name(key), taken), location="body", wire_name=key, schema=schema
        )

    def _render_data(self, value, problems, where):
        if isinstance(value, str):
            return self.render(value, problems, where)
        if isinstance(value, dict):
            return {k: self._render_data(v, problems, where) for k, v in value.items()}
        if isinstance(value, list):
            return [self._render_data(v, problems, where) for v in value]
        return value

    def _auth(self, auth, problems) -> list[dict]:
        if not isinstance(auth, dict) or auth.get("type") in (None, "noauth", "inherit"):
            return []
        kind = auth["type"]
        entries = {
            str(e.get("key")): e.get("value") for e in auth.get(kind) or [] if isinstance(e, dict)
        }

        def secret_value(raw, fallback):
            raw = "" if raw is None else str(raw)
            whole = _WHOLE_VARIABLE.match(raw)
            if whole:
                self.secret_variables.add(whole.group(1))
                return self.secret(whole.group(1))
            if raw:
                problems.append(
                    f"auth: a literal {kind} credential is in the collection; it is stored as "
                    "a secret placeholder instead, set the secret to that value"
                )
            return self.secret(fallback)

        if kind == "bearer":
            setting = {"type": "bearer", "token": secret_value(entries.get("token"), "token")}
        elif kind == "basic":
            setting = {
                "type": "basic",
                "username": secret_value(entries.get("username"), "username"),
                "password": secret_value(entries.get("password"), "password"),
            }
        elif kind == "apikey":
            location = str(entries.get("in") or "header")
            setting = {
                "type": "apiKey",
                "in": "query" if location == "query" else "header",
                "name": self.render(str(entries.get("key") or "X-API-Key"), problems, "auth"),
                "value": secret_value(entries.get("value"), "api_key"),
            }
        elif kind == "oauth2":
            problems.append("auth: OAuth 2.0 flows are not run; the access token is a secret")
            setting = {
                "type": "bearer",
                "token": secret_value(entries.get("accessToken"), "access_token"),
            }
        else:
            problems.append(
                f"auth: Postman auth type {kind!r} is not supported; no credentials sent"
            )
            return []
        if setting not in [{k: v for k, v in a.items() if k != "scheme"} for a in self.auth_found]:
            self.auth_found.append({"scheme": kind, **setting})
        return [copy.deepcopy(setting)]


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


def _parse_json_template(raw: str):
    """A raw JSON body whose `{{variables}}` (quoted or not) are sentinels; None if not JSON."""
    text = re.sub(
        r'"\{\{\s*([^{}\s]+)\s*\}\}"', lambda m: orjson.dumps(_SENTINEL + m.group(1)).decode(), raw
    )
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    # Unquoted variables stand for numbers or objects: `"count": {{n}}`.
    text = _VARIABLE.sub(lambda m: orjson.dumps(_SENTINEL + m.group(1)).decode(), text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _strip_sentinels(value):
    if isinstance(value, str) and value.startswith(_SENTINEL):
        return None
    if isinstance(value, dict):
        return {k: _strip_sentinels(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_sentinels(v) for v in value]
    return value


def _common_origin(urls: list[str]) -> str | None:
    origins = {m.group(0) for u in urls if (m := re.match(r"^[a-z]+://[^/]+", u or ""))}
    return origins.pop() if len(origins) == 1 else None


def _auth_values(auth) -> list[str]:
    """The text values of an auth block's entries (`{"bearer": [{"key", "value"}, ...]}`)."""
    if not isinstance(auth, dict):
        return []
    return [
        entry["value"]
        for entries in auth.values()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("value"), str)
    ]
