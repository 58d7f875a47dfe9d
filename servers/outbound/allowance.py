"""How an operator lets outbound fetches reach a refused address, in words the refusal carries.

A person who points a tool at an upstream on their own machine or network meets the guard
first; its answer must say who can open the way and how, or they are left to guess. Only the
deployment's operator can (the setting plus a restart, or staff's per-organization row in the
Django admin), and cloud metadata addresses can never be opened, so the hint says nothing for
them. The texts are shown to tenants and models as they are: they name settings, never values.
"""

from .addresses import METADATA_ADDRESSES, IPAddress, embedded_ipv4

ADMIN_PATH = "/admin/vault/networkallowance/"
# Refusals no allowance can lift (the guard refuses them whatever the lists say, or no
# connection can be made to them at all).
_FINAL = ("cloud metadata", "multicast", "unspecified")


def suggested_network(address: IPAddress) -> str:
    """The narrowest CIDR that admits the address: loopback as a whole range (a developer's
    upstreams move between ports and 127.x addresses), anything else on its own."""
    inner = embedded_ipv4(address) or address
    if inner.is_loopback:
        return "127.0.0.0/8" if inner.version == 4 else "::1/128"
    return f"{inner}/{32 if inner.version == 4 else 128}"


def how_to_allow(address: IPAddress, reason: str) -> str:
    """One or two sentences on lifting the refusal; empty when nothing can lift it."""
    if address in METADATA_ADDRESSES or any(word in reason for word in _FINAL):
        return ""
    network = suggested_network(address)
    text = (
        "The operator of this getmcp deployment can allow it: add "
        f"{network} to OUTBOUND_ALLOWED_NETWORKS (comma-separated CIDRs) in the server's "
        "environment and restart it, or, for one organization, a staff member adds a network "
        f"allowance for {network} in the Django admin ({ADMIN_PATH})."
    )
    inner = embedded_ipv4(address) or address
    if inner.is_loopback:
        text += (
            " For local development, OUTBOUND_ALLOW_LOOPBACK=true admits this machine's "
            "loopback addresses (make run on a loopback HOST sets it)."
        )
    return text


def refusal(shown: str, address: IPAddress, reason: str) -> str:
    """The guard's message for an address it refuses."""
    text = (
        f"Requests to {shown} are not allowed: it is {reason}. Outbound requests may only "
        "reach public internet addresses."
    )
    hint = how_to_allow(address, reason)
    return f"{text} {hint}" if hint else text
