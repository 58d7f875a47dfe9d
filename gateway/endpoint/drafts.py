"""What a draft server answers the keys of its own organization.

A draft is served to nobody, and to outsiders it looks exactly like a slug with no server (the
uniform 404 of gate.py, so nobody learns that it exists). Its own organization's keys, and
OAuth tokens issued for it, get a JSON-RPC error that says it is a draft and where to switch it
on: otherwise a client cannot tell a draft from a typo in the URL. Everything needed is in the
compiled snapshot and the credential the gate already holds, so this adds no SQL and no Redis
round trip.
"""

from django.conf import settings

from mcp_protocol import errors
from servers.snapshot import Snapshot

from .auth import Credential

# Forbidden, not Not Found: the server exists for this caller, and a client that sees 404 on a
# session-era request may take it for an expired session and start over in a loop.
DRAFT_STATUS = 403


def owns(credential: Credential, snapshot: Snapshot) -> bool:
    """Whether a valid credential belongs to the draft's organization (an API key of it, or an
    access token issued for this very server)."""
    if credential.is_oauth:
        return credential.audience_server_id == snapshot.server_id
    return credential.organization_id is not None and (
        credential.organization_id == snapshot.organization_id
    )


def activate_url(slug: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/servers/{slug}/"


def draft_message(slug: str) -> str:
    return (
        f"MCP server {slug!r} is a draft: it answers no client until it is activated. "
        f"Set its status to Active on {activate_url(slug)} "
        f'(or PATCH /api/servers/{slug}/ with {{"status": "active"}}).'
    )


def draft_error_data(slug: str) -> dict[str, str]:
    return {"status": "draft", "activateUrl": activate_url(slug)}


CODE = errors.INVALID_REQUEST
