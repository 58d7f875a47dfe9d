"""The OpenAPI schema documents the error shape on every operation."""

from typing import Literal

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from .errors import ErrorSerializer

ERRORS = {
    "400": "Invalid input; `fields` names each offending field.",
    "401": "Missing, invalid, expired or revoked token.",
    "403": "CSRF check failed (session authentication only).",
    "404": "Not found, or not in one of your organizations.",
    "415": "The request body is not JSON.",
}


class ApiSchema(AutoSchema):
    def _get_response_bodies(self, direction: Literal["request", "response"] = "response"):
        responses = super()._get_response_bodies(direction)
        error = self._get_response_for_code(ErrorSerializer, "400", direction=direction)
        for status, description in ERRORS.items():
            if status not in responses:
                responses[status] = {**error, "description": description}
        return responses


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (gpat_…), as `Bearer` or `Token`.",
        }
