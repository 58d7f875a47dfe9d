"""Turning API descriptions (OpenAPI 3.0/3.1, Swagger 2.0, Postman 2.1) into draft `http` tools:
parse into an ImportPreview first, then `commit_import` the operations a person selected."""

from .openapi import parse_openapi
from .postman import parse_postman
from .preview import ImportedOperation, ImportFailed, ImportPreview
from .reimport import ImportPlan, apply_import, commit_import, plan_import

__all__ = [
    "ImportFailed",
    "ImportPlan",
    "ImportPreview",
    "ImportedOperation",
    "apply_import",
    "commit_import",
    "parse_openapi",
    "parse_postman",
    "plan_import",
]
