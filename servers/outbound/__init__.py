"""The SSRF guard and the guarded httpx2 client every outbound fetch goes through."""

from .client import (
    GuardedResponse,
    check_url,
    guarded_client,
    guarded_request,
    guarded_request_sync,
)
from .errors import BlockedDestination, OutboundError, OutboundTimeout

__all__ = [
    "BlockedDestination",
    "GuardedResponse",
    "OutboundError",
    "OutboundTimeout",
    "check_url",
    "guarded_client",
    "guarded_request",
    "guarded_request_sync",
]
