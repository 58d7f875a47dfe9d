"""The known providers' endpoints and habits, so an admin types only a client id and secret.

A preset fills the fields of a new provider; every field stays editable, and `generic` fills
nothing (any OAuth 2.0 provider with an authorization code flow)."""

from types import MappingProxyType
from typing import Any

_PRESETS: dict[str, dict[str, Any]] = {
    "github": {
        "name": "GitHub",
        "authorization_url": "https://github.com/login/oauth/authorize",
        "token_url": "https://github.com/login/oauth/access_token",
        "scopes": ["read:user", "repo"],
        "pkce": True,
    },
    "google": {
        "name": "Google",
        "authorization_url": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_url": "https://oauth2.googleapis.com/token",
        "revocation_url": "https://oauth2.googleapis.com/revoke",
        "scopes": ["openid", "email"],
        # Google issues a refresh token only for offline access, and again only with consent.
        "extra_authorize_params": {"access_type": "offline", "prompt": "consent"},
    },
    "microsoft": {
        "name": "Microsoft",
        "authorization_url": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
        "token_url": "https://login.microsoftonline.com/common/oauth2/v2.0/token",
        "scopes": ["offline_access", "User.Read"],
    },
    "slack": {
        "name": "Slack",
        "authorization_url": "https://slack.com/oauth/v2/authorize",
        "token_url": "https://slack.com/api/oauth.v2.access",
        "revocation_url": "",
        "scopes": ["channels:read", "chat:write"],
        "scope_separator": ",",
        "pkce": False,
    },
    "atlassian": {
        "name": "Atlassian",
        "authorization_url": "https://auth.atlassian.com/authorize",
        "token_url": "https://auth.atlassian.com/oauth/token",
        "scopes": ["offline_access", "read:jira-work"],
        "extra_authorize_params": {"audience": "api.atlassian.com", "prompt": "consent"},
    },
    "notion": {
        "name": "Notion",
        "authorization_url": "https://api.notion.com/v1/oauth/authorize",
        "token_url": "https://api.notion.com/v1/oauth/token",
        "scopes": [],
        "client_auth": "client_secret_basic",
        "extra_authorize_params": {"owner": "user"},
        "pkce": False,
    },
    "linear": {
        "name": "Linear",
        "authorization_url": "https://linear.app/oauth/authorize",
        "token_url": "https://api.linear.app/oauth/token",
        "revocation_url": "https://api.linear.app/oauth/revoke",
        "scopes": ["read"],
        "scope_separator": ",",
    },
    "salesforce": {
        "name": "Salesforce",
        "authorization_url": "https://login.salesforce.com/services/oauth2/authorize",
        "token_url": "https://login.salesforce.com/services/oauth2/token",
        "revocation_url": "https://login.salesforce.com/services/oauth2/revoke",
        "scopes": ["api", "refresh_token"],
    },
}

PRESETS = MappingProxyType({k: MappingProxyType(v) for k, v in _PRESETS.items()})
CHOICES = [("generic", "Generic OAuth 2.0")] + [(k, v["name"]) for k, v in _PRESETS.items()]


def preset_fields(preset: str) -> dict[str, Any]:
    """The fields a preset fills (an empty dict for `generic`); KeyError for an unknown one."""
    if preset == "generic":
        return {}
    fields = dict(PRESETS[preset])
    fields["scopes"] = list(fields.get("scopes", []))
    fields["extra_authorize_params"] = dict(fields.get("extra_authorize_params", {}))
    return fields
