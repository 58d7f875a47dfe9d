"""Stage 3, narrow: the server as this caller may see it, and what the caller may do on it.

In: the published snapshot and the credential (its compiled access limits and role,
servers/access.py). Out: the snapshot narrowed to the caller, a view built once and kept per
principal. Per message, `require_scope` refuses what an OAuth token's scopes do not allow
(step-up, MCP 2025-11-25, RFC 6750 §3.1): a token limited to reading may not call."""

from collections.abc import Iterable

from mcp_protocol import errors
from servers import access
from servers.snapshot import Snapshot

from .credentials import Credential
from .refused import FULL_SCOPE_METHODS, SCOPE_FULL, Refused, resource_metadata_url


def narrow(snapshot: Snapshot, credential: Credential) -> Snapshot:
    narrowed: Snapshot = access.scoped(snapshot, credential)
    return narrowed


def require_scope(snapshot: Snapshot, credential: Credential, methods: Iterable[str]) -> None:
    lacking = scope_refusal(snapshot, credential, methods)
    if lacking is not None:
        raise lacking


def scope_refusal(
    snapshot: Snapshot, credential: Credential, methods: Iterable[str]
) -> Refused | None:
    """The refusal of methods that the token's scopes do not allow, if any."""
    if not credential.is_oauth or SCOPE_FULL in credential.scopes:
        return None
    if any(method in FULL_SCOPE_METHODS for method in methods):
        return Refused(
            403,
            errors.INVALID_REQUEST,
            f"This access token lacks the {SCOPE_FULL!r} scope needed to call tools",
            [
                (
                    "www-authenticate",
                    f'Bearer error="insufficient_scope", scope="{SCOPE_FULL}", '
                    f'resource_metadata="{resource_metadata_url(snapshot.slug)}"',
                )
            ],
            reason="insufficient_scope",
        )
    return None
