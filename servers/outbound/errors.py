"""Errors of outbound fetches, worded so they can be shown to users and models as they are."""


class OutboundError(Exception):
    """A fetch that could not be made or completed; `message` is safe to show."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BlockedDestination(OutboundError):
    """The destination is an address this deployment does not fetch from."""


class OutboundTimeout(OutboundError):
    """The request did not complete within its time limit."""
