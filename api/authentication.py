"""`Authorization: Token gpat_…` (or `Bearer gpat_…`) for the management API."""

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.models import KEY_PREFIX

from .models import TOKEN_PREFIX, PersonalAccessToken


class PersonalTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("token", "bearer")

    def authenticate(self, request: Request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0].lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization: expected '<scheme> <token>'.")
        raw = header[1]
        if header[0].lower() == "bearer" and not raw.startswith(TOKEN_PREFIX):
            if raw.startswith(KEY_PREFIX):
                raise exceptions.AuthenticationFailed(
                    "This is an MCP API key; the management API takes a personal access token "
                    f"({TOKEN_PREFIX}…)."
                )
            # Another scheme's bearer token: leave it to the next authenticator.
            return None
        token = PersonalAccessToken.find_active(raw)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        token.touch()
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        # Makes unauthenticated requests 401 (with this challenge) instead of 403.
        return 'Token realm="api"'
