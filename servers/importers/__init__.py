"""Turning API descriptions (OpenAPI 3.0/3.1, Swagger 2.0, Postman 2.1) into draft `http` tools:
parse into an ImportPreview first, then `commit_import` the operations a person selected."""

from .openapi import parse_openapi
from .postman import parse_postman
from .preview import ImportedOperation, ImportFailed, ImportPreview, commit_import

__all__ = [
    "ImportFailed",
    "ImportPreview",
    "ImportedOperation",
    "commit_import",
    "parse_openapi",
    "parse_postman",
]
