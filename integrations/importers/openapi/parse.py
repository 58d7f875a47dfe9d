"""`parse_openapi`: a document's paths walked into an ImportPreview of `http` tools."""

from ..preview import ImportedOperation, ImportFailed, ImportPreview, validate_operations
from ..schemas import RefError
from ..sources import load
from .document import OpenAPIDocument
from .operations import imported_operation
from .security import SecuritySchemes

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


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
    return _preview(OpenAPIDocument(document, base_url or origin, secret_prefix))


def _preview(document: OpenAPIDocument) -> ImportPreview:
    document.check_spec()
    security = SecuritySchemes(document)
    security.read()
    default_servers = document.servers(document.doc.get("servers"), "servers")
    paths = document.doc.get("paths")
    if not isinstance(paths, dict) or not paths:
        raise ImportFailed("paths: the document has no operations")
    operations: list[ImportedOperation] = []
    taken: set[str] = set()
    for path, raw_item in paths.items():
        where = f"paths.{path}"
        try:
            item = document.resolver.resolve(raw_item)
        except RefError as exc:
            document.problems.append(f"{where}: {exc}; skipped")
            continue
        if not isinstance(item, dict):
            continue
        path_servers = document.servers(item.get("servers"), f"{where}.servers") or default_servers
        for method in METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                operations.append(
                    imported_operation(
                        document, security, path, method, op, item, path_servers, taken
                    )
                )
    if not operations:
        raise ImportFailed("paths: the document has no operations")
    preview = ImportPreview(
        format=document.format,
        title=document.title,
        version=document.version,
        base_url=default_servers[0] if default_servers else None,
        operations=operations,
        secrets=security.secrets,
        providers=list(security.providers.values()),
        auth=[
            {"scheme": name, **(setting or {"type": "unsupported"})}
            for name, setting in security.schemes.items()
        ],
        problems=document.problems,
    )
    validate_operations(preview)
    return preview
