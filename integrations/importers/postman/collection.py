"""`parse_postman`: a collection's folders walked into an ImportPreview of `http` tools.

Folders become name prefixes; a folder's auth is what its requests inherit unless they set
their own.
"""

import re

from ..preview import ImportedOperation, ImportFailed, ImportPreview, validate_operations
from ..sources import load
from .request import imported_request
from .variables import Variables


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
    return _Collection(document, variables or {}, secret_prefix).parse()


class _Collection:
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
        self.variables = Variables(document, overrides, secret_prefix or self.title)
        self.auth_found: list[dict] = []
        self.problems: list[str] = []

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
            secrets=self.variables.secrets,
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
                operations.append(
                    imported_request(self.variables, self.auth_found, item, folders, auth, taken)
                )


def _common_origin(urls: list[str]) -> str | None:
    origins = {m.group(0) for u in urls if (m := re.match(r"^[a-z]+://[^/]+", u or ""))}
    return origins.pop() if len(origins) == 1 else None
