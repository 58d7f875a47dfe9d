"""OpenAPI 3.0, 3.1 and Swagger 2.0 documents turned into a preview of `http` tools.

One reader of one document format, longer than most modules: its methods follow the document's
own structure (servers, paths, operations, parameters, bodies, security), and each needs the
reader's state (the document, its dialect, its security schemes), so it stays together.
"""

import copy
import re
from urllib.parse import urljoin

from django.utils.text import slugify

from .mapping import http_config
from .preview import (
    Argument,
    ImportedOperation,
    ImportFailed,
    ImportPreview,
    annotations_for,
    argument_name,
    describe,
    identifier,
    input_schema,
    secret_name,
    secret_placeholder,
    snake,
    tool_name,
    unique,
    validate_operations,
)
from .schemas import RefError, Resolver, schema_problems
from .sources import load

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# OpenAPI 3: header parameters with these names SHALL be ignored (the spec's own rule).
_IGNORED_HEADERS = {"accept", "content-type", "authorization"}
_SERVER_VARIABLE = re.compile(r"\{([^{}]+)\}")
_PATH_TEMPLATE = re.compile(r"\{([^{}]+)\}")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def parse_openapi(
    source,
    *,
    base_url: str | None = None,
    secret_prefix: str | None = None,
    organization_id: int | None = None,
) -> ImportPreview:
    """Preview the operations of an OpenAPI 3.0/3.1 or Swagger 2.0 document.

    `source`: a dict, the document's text (JSON or YAML), a pathlib.Path or an http(s) URL.
    `base_url`: where relative server URLs point (default: the URL the document came from).
    `secret_prefix`: first word of the secret names (default: the API's title).
    `organization_id`: whose network allowances apply when fetching a URL.
    """
    document, origin = load(source, organization_id)
    return _Parser(document, base_url or origin, secret_prefix).parse()


class _Parser:
    def __init__(self, document: dict, origin: str | None, secret_prefix: str | None) -> None:
        self.doc = document
        self.origin = origin
        if str(document.get("swagger", "")).startswith("2."):
            self.dialect, self.format = "2.0", "swagger-2.0"
        elif str(document.get("openapi", "")).startswith("3.0"):
            self.dialect, self.format = "3.0", "openapi-3.0"
        elif str(document.get("openapi", "")).startswith("3.1"):
            self.dialect, self.format = "3.1", "openapi-3.1"
        elif "openapi" in document or "swagger" in document:
            version = document.get("openapi") or document.get("swagger")
            raise ImportFailed(
                f"openapi: version {version!r} is not supported (2.0, 3.0 and 3.1 are)"
            )
        else:
            raise ImportFailed(
                "document: not an OpenAPI or Swagger document (no `openapi` or `swagger` field)"
            )
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        self.title = str(info.get("title") or "API")
        self.version = str(info.get("version") or "")
        self.prefix = secret_prefix or self.title
        self.resolver = Resolver(document, self.dialect)
        self.problems: list[str] = []
        self.schemes: dict[str, dict] = {}  # scheme name -> auth setting (or None: unsupported)
        self.secrets: list[str] = []
        # scheme name -> the connection provider an authorization-code flow proposes: tools
        # that need it act as the calling person, through a connected account
        self.providers: dict[str, dict] = {}

    # -- the document ------------------------------------------------------------------------

    def parse(self) -> ImportPreview:
        self._check_spec()
        self._security_schemes()
        default_servers = self._servers(self.doc.get("servers"), "servers")
        paths = self.doc.get("paths")
        if not isinstance(paths, dict) or not paths:
            raise ImportFailed("paths: the document has no operations")
        operations: list[ImportedOperation] = []
        taken: set[str] = set()
        for path, raw_item in paths.items():
            where = f"paths.{path}"
            try:
                item = self.resolver.resolve(raw_item)
            except RefError as exc:
                self.problems.append(f"{where}: {exc}; skipped")
                continue
            if not isinstance(item, dict):
                continue
            path_servers = self._servers(item.get("servers"), f"{where}.servers") or default_servers
            for method in METHODS:
                op = item.get(method)
                if isinstance(op, dict):
                    operations.append(self._operation(path, method, op, item, path_servers, taken))
        if not operations:
            raise ImportFailed("paths: the document has no operations")
        preview = ImportPreview(
            format=self.format,
            title=self.title,
            version=self.version,
            base_url=default_servers[0] if default_servers else None,
            operations=operations,
            secrets=self.secrets,
            providers=list(self.providers.values()),
            auth=[
                {"scheme": name, **(setting or {"type": "unsupported"})}
                for name, setting in self.schemes.items()
            ],
            problems=self.problems,
        )
        validate_operations(preview)
        return preview

    def _check_spec(self) -> None:
        """Problems the official validator sees; the import still goes on where it can."""
        from openapi_spec_validator import validate

        try:
            validate(copy.deepcopy(self.doc))
        except Exception as exc:  # the validator raises its own family of errors
            message = getattr(exc, "message", None) or str(exc).splitlines()[0]
            self.problems.append(f"the document does not validate as {self.format}: {message}")

    def _servers(self, servers, where: str) -> list[str]:
        if self.dialect == "2.0":
            return self._swagger_base() if where == "servers" else []
        if not isinstance(servers, list):
            return []
        urls = []
        for index, server in enumerate(servers):
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                continue
            variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}

            def substitute(match, variables=variables, index=index):
                name = match.group(1)
                variable = variables.get(name)
                if isinstance(variable, dict) and "default" in variable:
                    return str(variable["default"])
                self.problems.append(f"{where}[{index}]: variable {name!r} has no default")
                return match.group(0)

            url = _SERVER_VARIABLE.sub(substitute, server["url"]).rstrip("/")
            urls.append(self._absolute(url, f"{where}[{index}]"))
        return [u for u in urls if u]

    def _swagger_base(self) -> list[str]:
        host = self.doc.get("host")
        base_path = str(self.doc.get("basePath") or "").rstrip("/")
        schemes = self.doc.get("schemes") or []
        scheme = "https" if "https" in schemes or not schemes else schemes[0]
        if host:
            return [f"{scheme}://{host}{base_path}"]
        return [u for u in [self._absolute(base_path or "/", "host")] if u]

    def _absolute(self, url: str, where: str) -> str | None:
        if re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I):
            return url
        if self.origin:
            return urljoin(self.origin, url or "/").rstrip("/")
        self.problems.append(
            f"{where}: the server URL {url!r} is relative; give a base URL so the tools know where to call"
        )
        return None

    def _security_schemes(self) -> None:
        if self.dialect == "2.0":
            schemes = self.doc.get("securityDefinitions") or {}
        else:
            schemes = (self.doc.get("components") or {}).get("securitySchemes") or {}
        for name, raw in schemes.items():
            try:
                scheme = self.resolver.resolve(raw)
            except RefError as exc:
                self.problems.append(f"securitySchemes.{name}: {exc}")
                self.schemes[name] = None
                continue
            self.schemes[name] = self._auth_setting(name, scheme)

    def _secret(self, scheme_name: str, suffix: str = "") -> str:
        name = secret_name(self.prefix, scheme_name, suffix)
        if name not in self.secrets:
            self.secrets.append(name)
        return name

    def _api_key_setting(self, name: str, scheme: dict, where: str) -> dict | None:
        location = scheme.get("in")
        if location == "cookie":
            self.problems.append(f"{where}: API keys in cookies are not supported; not sent")
            return None
        if location not in ("header", "query"):
            self.problems.append(f"{where}.in: {location!r} is not header or query")
            return None
        return {
            "type": "apiKey",
            "in": location,
            "name": str(scheme.get("name") or "X-API-Key"),
            "value": secret_placeholder(self._secret(name)),
        }

    def _auth_setting(self, name: str, scheme: dict) -> dict | None:
        scheme_type = str(scheme.get("type", "")).lower()
        where = f"securitySchemes.{name}"
        if scheme_type == "apikey":
            return self._api_key_setting(name, scheme, where)
        http_scheme = str(scheme.get("scheme", "")).lower()
        if scheme_type == "basic" or (scheme_type == "http" and http_scheme == "basic"):
            return {
                "type": "basic",
                "username": secret_placeholder(self._secret(name, "username")),
                "password": secret_placeholder(self._secret(name, "password")),
            }
        if scheme_type == "http" and http_scheme == "bearer":
            return {"type": "bearer", "token": secret_placeholder(self._secret(name, "token"))}
        flows = scheme.get("flows") if isinstance(scheme.get("flows"), dict) else {}
        authorization_code = flows.get("authorizationCode") or (
            scheme if scheme_type == "oauth2" and scheme.get("flow") == "accessCode" else None
        )
        if scheme_type == "oauth2" and isinstance(authorization_code, dict):
            proposal = self._provider(name, authorization_code)
            if proposal is not None:
                return {"type": "connection", "provider": proposal["key"]}
        client_credentials = flows.get("clientCredentials") or (
            scheme if scheme_type == "oauth2" and scheme.get("flow") == "application" else None
        )
        if (
            scheme_type == "oauth2"
            and isinstance(client_credentials, dict)
            and client_credentials.get("tokenUrl")
        ):
            setting = {
                "type": "oauth2",
                "tokenUrl": str(client_credentials["tokenUrl"]),
                "clientId": secret_placeholder(self._secret(name, "client_id")),
                "clientSecret": secret_placeholder(self._secret(name, "client_secret")),
            }
            scopes = client_credentials.get("scopes")
            if isinstance(scopes, dict) and scopes:
                setting["scope"] = " ".join(scopes)
            return setting
        if scheme_type in ("oauth2", "openidconnect"):
            self.problems.append(
                f"{where}: {scheme.get('type')} flows are not run by the importer; "
                "the tools send a bearer access token you store as a secret"
            )
            return {"type": "bearer", "token": secret_placeholder(self._secret(name, "token"))}
        self.problems.append(
            f"{where}: security scheme type {scheme.get('type')!r} is not supported"
        )
        return None

    def _provider(self, name: str, flow: dict) -> dict | None:
        """The connection provider an authorization-code flow describes, or None (and a
        problem) when its endpoints are not absolute URLs."""
        where = f"securitySchemes.{name}"
        urls = {}
        for field_name in ("authorizationUrl", "tokenUrl", "refreshUrl"):
            raw = flow.get(field_name)
            if not raw:
                continue
            url = self._absolute(str(raw), f"{where}.{field_name}")
            if url is None:
                return None
            if not url.startswith(("https://", "http://")):
                self.problems.append(f"{where}.{field_name}: {raw!r} is not an http(s) URL")
                return None
            urls[field_name] = url
        if "authorizationUrl" not in urls or "tokenUrl" not in urls:
            self.problems.append(f"{where}: an authorization-code flow needs both URLs")
            return None
        taken = {p["key"] for p in self.providers.values()}
        key = slugify(self.title)[:50].strip("-") or slugify(name)[:50] or "api"
        if key in taken:
            key = slugify(f"{self.title}-{name}")[:50].strip("-")
        scopes = flow.get("scopes") if isinstance(flow.get("scopes"), dict) else {}
        proposal = {
            "key": key,
            "name": self.title[:100],
            "scheme": name,
            "authorizationUrl": urls["authorizationUrl"],
            "tokenUrl": urls["tokenUrl"],
            # scope -> what the document says it allows, for the person deciding
            "scopes": {str(k): str(v or "") for k, v in scopes.items()},
        }
        self.providers[name] = proposal
        return proposal

    # -- one operation -------------------------------------------------------------------------

    def _operation(self, path, method, op, item, servers, taken) -> ImportedOperation:
        source = f"{method.upper()} {path}"
        problems: list[str] = []
        operation_id = op.get("operationId") if isinstance(op.get("operationId"), str) else None
        raw_name = operation_id or f"{method}_{_path_words(path)}"
        name = unique(tool_name(snake(raw_name) if not operation_id else raw_name), taken)
        if operation_id and name != operation_id:
            problems.append(f"tool name {name!r} differs from operationId {operation_id!r}")

        arguments: list[Argument] = []
        arg_taken: set[str] = set()
        body_type = None
        for param in self._parameters(item, op, problems):
            arg = self._parameter_argument(param, problems, arg_taken)
            if arg is not None:
                arguments.append(arg)
        if self.dialect == "2.0":
            body_args, body_type = self._swagger_body(op, problems, arg_taken)
        else:
            body_args, body_type = self._request_body(op, problems, arg_taken)
        arguments.extend(body_args)

        declared = {a.wire_name for a in arguments if a.location == "path"}
        for placeholder in _PATH_TEMPLATE.findall(path):
            if placeholder not in declared:
                problems.append(
                    f"path parameter {placeholder!r} is not declared; added as a string"
                )
                arguments.append(
                    Argument(
                        name=unique(identifier(placeholder), arg_taken),
                        location="path",
                        wire_name=placeholder,
                        schema={"type": "string"},
                        required=True,
                    )
                )
        url_path = _PATH_TEMPLATE.sub(
            lambda m: "{" + _argument_for(arguments, "path", m.group(1)) + "}", path
        )

        op_servers = self._servers(op.get("servers"), f"{source}.servers") or servers
        if not op_servers:
            problems.append(
                "no server URL: the tool's url is only the path until a base URL is set"
            )
        base = op_servers[0] if op_servers else ""

        auth, connection = self._operation_auth(op, problems)
        if op.get("deprecated"):
            problems.append("the operation is deprecated")

        schema = input_schema(arguments, self.resolver.take_defs())
        problems.extend(schema_problems(schema))
        summary = str(op.get("summary") or "").strip()
        details = str(op.get("description") or "").strip()
        description = describe(summary, details) or f"{method.upper()} {path}"
        headers = {"Accept": "application/json"}
        config = http_config(
            method=method,
            url=base + url_path,
            arguments=arguments,
            auth=auth,
            headers=headers,
            body_type=body_type,
            problems=problems,
        )
        if connection is not None:
            config["connection"] = connection
        return ImportedOperation(
            name=name,
            source=source,
            operation_id=operation_id,
            title=summary[:200],
            description=description,
            method=method.upper(),
            input_schema=schema,
            config=config,
            annotations=annotations_for(method),
            problems=problems,
            arguments=arguments,
        )

    def _parameters(self, item, op, problems) -> list[dict]:
        merged: dict[tuple, dict] = {}
        for level in (item.get("parameters"), op.get("parameters")):
            for raw in level or []:
                try:
                    param = self.resolver.resolve(raw)
                except RefError as exc:
                    problems.append(f"parameter: {exc}; skipped")
                    continue
                if isinstance(param, dict) and "name" in param and "in" in param:
                    merged[(param["name"], param["in"])] = param  # the operation's wins
        return list(merged.values())

    def _parameter_argument(self, param, problems, arg_taken) -> Argument | None:
        location, wire = param["in"], str(param["name"])
        if location in ("body", "formData"):  # Swagger 2.0; handled with the body
            return None
        if location not in ("path", "query", "header", "cookie"):
            problems.append(f"parameter {wire!r}: location {location!r} is not supported; skipped")
            return None
        if location == "header" and wire.lower() in _IGNORED_HEADERS:
            return None
        where = f"parameter {wire!r}"
        if self.dialect == "2.0":
            raw_schema = {
                k: v
                for k, v in param.items()
                if k
                not in (
                    "name",
                    "in",
                    "required",
                    "description",
                    "collectionFormat",
                    "allowEmptyValue",
                )
            }
            if param.get("type") == "array" and param.get("collectionFormat") != "multi":
                # Swagger's default is csv (a,b); the http kind repeats the parameter.
                fmt = param.get("collectionFormat") or "csv"
                problems.append(
                    f"{where}: a {fmt} list upstream, sent as repeated values ({wire}=a&{wire}=b)"
                )
        elif "schema" in param:
            raw_schema = param["schema"]
        elif isinstance(param.get("content"), dict) and param["content"]:
            raw_schema = next(iter(param["content"].values())).get("schema", {})
        else:
            raw_schema = {}
            problems.append(f"{where}: no schema; any value accepted")
        schema = self.resolver.schema(raw_schema, problems, where)
        if self.dialect != "2.0":
            self._style_problems(param, schema, location, wire, problems)
        if self.dialect != "2.0" and "example" in param and "examples" not in schema:
            schema["examples"] = [param["example"]]
        name = identifier(wire) if location == "path" else argument_name(wire)
        if name in arg_taken:
            name = argument_name(f"{location}_{wire}")
        return Argument(
            name=unique(name, arg_taken),
            location=location,
            wire_name=wire,
            schema=schema,
            required=bool(param.get("required")) or location == "path",
            description=str(param.get("description") or "").strip(),
        )

    @staticmethod
    def _style_problems(param, schema, location, wire, problems) -> None:
        """Serialisations the http kind does not produce (it repeats list items, and sends
        objects as JSON text), said where a person reviews the import."""
        style = param.get("style") or ("form" if location in ("query", "cookie") else "simple")
        explode = param.get("explode", style == "form")
        kind = schema.get("type")
        is_list = kind == "array" or (isinstance(kind, list) and "array" in kind)
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
        where = f"parameter {wire!r}"
        if location == "query" and style == "deepObject":
            problems.append(f"{where}: deepObject style ({wire}[key]=value) is sent as JSON text")
        elif location == "query" and is_list and (not explode or style != "form"):
            problems.append(
                f"{where}: a {style}{'' if explode else ', not exploded,'} list upstream, "
                f"sent as repeated values ({wire}=a&{wire}=b)"
            )
        elif location == "query" and is_object:
            problems.append(f"{where}: an object, sent as JSON text")

    def _request_body(self, op, problems, arg_taken):
        raw = op.get("requestBody")
        if raw is None:
            return [], None
        try:
            body = self.resolver.resolve(raw)
        except RefError as exc:
            problems.append(f"requestBody: {exc}; no body is sent")
            return [], None
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, dict) or not content:
            problems.append("requestBody: no content types; no body is sent")
            return [], None
        media = _pick_media_type(content)
        if media is None:
            problems.append(
                f"requestBody: content types {', '.join(content)} are not supported "
                "(JSON, form and text bodies are); no body is sent"
            )
            return [], None
        if len(content) > 1:
            others = ", ".join(m for m in content if m != media)
            problems.append(f"requestBody: sent as {media}; {others} not used")
        raw_schema = (content[media] or {}).get("schema", {})
        schema = self.resolver.schema(raw_schema, problems, "requestBody")
        body_type = _body_type(media)
        return (
            self._body_arguments(
                schema,
                body_type,
                bool(body.get("required")),
                body.get("description"),
                problems,
                arg_taken,
            ),
            body_type,
        )

    def _swagger_body(self, op, problems, arg_taken):
        params = []
        for raw in op.get("parameters") or []:
            try:
                param = self.resolver.resolve(raw)
            except RefError:
                continue
            if isinstance(param, dict) and param.get("in") in ("body", "formData"):
                params.append(param)
        body = [p for p in params if p["in"] == "body"]
        form = [p for p in params if p["in"] == "formData"]
        if body:
            schema = self.resolver.schema(body[0].get("schema", {}), problems, "body")
            return (
                self._body_arguments(
                    schema,
                    "json",
                    bool(body[0].get("required")),
                    body[0].get("description"),
                    problems,
                    arg_taken,
                ),
                "json",
            )
        if form:
            consumes = op.get("consumes") or self.doc.get("consumes") or []
            has_file = any(p.get("type") == "file" for p in form)
            body_type = "multipart" if "multipart/form-data" in consumes or has_file else "form"
            arguments = []
            for param in form:
                wire = str(param["name"])
                raw_schema = {
                    k: v
                    for k, v in param.items()
                    if k not in ("name", "in", "required", "description")
                }
                name = argument_name(wire)
                if name in arg_taken:
                    name = argument_name(f"form_{wire}")
                arguments.append(
                    Argument(
                        name=unique(name, arg_taken),
                        location="form",
                        wire_name=wire,
                        schema=self.resolver.schema(raw_schema, problems, f"formData {wire!r}"),
                        required=bool(param.get("required")),
                        description=str(param.get("description") or "").strip(),
                    )
                )
            if has_file:
                problems.append("file uploads are sent as text form fields")
            return arguments, body_type
        return [], None

    def _body_arguments(
        self, schema, body_type, required, description, problems, arg_taken
    ) -> list[Argument]:
        """An object body's properties become arguments of their own (what a model fills in
        best); anything else is one `body` argument."""
        flat = _flatten_object(schema) if body_type != "text" else None
        location = "form" if body_type in ("form", "multipart") else "body"
        if flat is not None:
            properties, required_props = flat
            arguments = []
            for prop, sub in properties.items():
                name = argument_name(prop)
                if name in arg_taken:  # a parameter has that name already
                    name = argument_name(f"body_{prop}")
                arguments.append(
                    Argument(
                        name=unique(name, arg_taken),
                        location=location,
                        wire_name=prop,
                        schema=sub,
                        required=required and prop in required_props,
                    )
                )
            if required and not required_props and location == "body":
                problems.append(
                    "requestBody: required, but none of its properties is; an empty object is sent"
                )
            return arguments
        if location == "form":
            problems.append("form body: not an object with properties; sent as one field `body`")
        return [
            Argument(
                name=unique("body", arg_taken),
                location="body",
                wire_name=None,
                schema=schema,
                required=required,
                description=str(description or "The request body.").strip(),
            )
        ]

    def _operation_auth(self, op, problems) -> tuple[list[dict], dict | None]:
        """The auth settings of the operation's (or the document's) first security
        requirement, and the connection it needs when that names an authorization-code
        scheme, with the scopes the requirement lists."""
        requirements = op.get("security", self.doc.get("security"))
        if not isinstance(requirements, list) or not requirements:
            return [], None
        if any(req == {} for req in requirements):
            return [], None  # anonymous access is one of the alternatives: send no credentials
        chosen = requirements[0]
        if len(requirements) > 1:
            names = " or ".join("+".join(req) for req in requirements)
            problems.append(f"security: {names} accepted; the tool uses {'+'.join(chosen)}")
        settings, connection = [], None
        for scheme in chosen:
            setting = self.schemes.get(scheme)
            if setting is None:
                problems.append(
                    f"security: scheme {scheme!r} is not defined or not supported; no credentials sent for it"
                )
                continue
            if setting.get("type") == "connection":
                if connection is not None:
                    problems.append(f"security: one connection per tool; {scheme!r} not sent")
                    continue
                scopes = chosen[scheme] if isinstance(chosen[scheme], list) else []
                connection = {
                    "provider": setting["provider"],
                    "scopes": [str(s) for s in scopes if s],
                }
                continue
            settings.append(copy.deepcopy(setting))
        return settings, connection


def _pick_media_type(content: dict) -> str | None:
    types = list(content)
    for media in types:
        base = media.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return media
    for wanted in FORM_TYPES:
        for media in types:
            if media.split(";")[0].strip().lower() == wanted:
                return media
    for media in types:
        if media.split(";")[0].strip().lower() in ("*/*", "application/*"):
            return media
    for media in types:
        if media.split(";")[0].strip().lower().startswith("text/"):
            return media
    return None


def _body_type(media: str) -> str:
    base = media.split(";")[0].strip().lower()
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base == "multipart/form-data":
        return "multipart"
    if base.startswith("text/"):
        return "text"
    return "json"


def _flatten_object(schema: dict) -> tuple[dict, list] | None:
    """(properties, required) of an object schema, `allOf` of objects merged; None otherwise."""
    merged = _object_parts(schema)
    if merged is None or not merged[0]:
        return None
    properties, required = merged
    return properties, [r for r in required if r in properties]


def _object_parts(schema) -> tuple[dict, list] | None:
    if not isinstance(schema, dict) or "$ref" in schema or "oneOf" in schema or "anyOf" in schema:
        return None
    kind = schema.get("type", "object")
    if kind != "object" and kind != ["object"]:
        return None
    properties = dict(schema.get("properties") or {})
    required = list(schema.get("required") or [])
    for part in schema.get("allOf") or []:
        merged = _object_parts(part)
        if merged is None:
            return None
        properties.update(merged[0])
        required.extend(r for r in merged[1] if r not in required)
    return properties, required


def _argument_for(arguments: list[Argument], location: str, wire: str) -> str:
    for arg in arguments:
        if arg.location == location and arg.wire_name == wire:
            return arg.name
    return wire


def _path_words(path: str) -> str:
    words = []
    for segment in path.strip("/").split("/"):
        match = _PATH_TEMPLATE.fullmatch(segment)
        words.append(f"by_{match.group(1)}" if match else segment)
    return "_".join(words) or "root"
