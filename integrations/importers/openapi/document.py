"""One OpenAPI or Swagger document as the importer reads it: its dialect, its title and version,
its server URLs made absolute, and the problems found at the document's level.

The other modules of the importer share one instance: the schemes, the operations and the
bodies all resolve `$ref`s through its `resolver` and report document-level problems to it.
"""

import copy
import re
from urllib.parse import urljoin

from ..preview import ImportFailed
from ..schemas import Resolver

_SERVER_VARIABLE = re.compile(r"\{([^{}]+)\}")


class OpenAPIDocument:
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
        info = document.get("info")
        if not isinstance(info, dict):
            info = {}
        self.title = str(info.get("title") or "API")
        self.version = str(info.get("version") or "")
        self.prefix = secret_prefix or self.title
        self.resolver = Resolver(document, self.dialect)
        self.problems: list[str] = []

    def check_spec(self) -> None:
        """Problems the official validator sees; the import still goes on where it can."""
        from openapi_spec_validator import validate

        try:
            validate(copy.deepcopy(self.doc))
        except Exception as exc:  # the validator raises its own family of errors
            message = getattr(exc, "message", None) or str(exc).splitlines()[0]
            self.problems.append(f"the document does not validate as {self.format}: {message}")

    def servers(self, servers, where: str) -> list[str]:
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
            urls.append(self.absolute(url, f"{where}[{index}]"))
        return [u for u in urls if u]

    def _swagger_base(self) -> list[str]:
        host = self.doc.get("host")
        base_path = str(self.doc.get("basePath") or "").rstrip("/")
        schemes = self.doc.get("schemes") or []
        scheme = "https" if "https" in schemes or not schemes else schemes[0]
        if host:
            return [f"{scheme}://{host}{base_path}"]
        return [u for u in [self.absolute(base_path or "/", "host")] if u]

    def absolute(self, url: str, where: str) -> str | None:
        if re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I):
            return url
        if self.origin:
            return urljoin(self.origin, url or "/").rstrip("/")
        self.problems.append(
            f"{where}: the server URL {url!r} is relative; give a base URL so the tools know where to call"
        )
        return None
