"""Turning a host into the addresses the guard checks, and the allow-lists that open ranges."""

import asyncio
import socket

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .addresses import IPAddress, IPNetwork, parse_ip_literal, parse_networks


async def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to (a literal in any notation resolves to itself)."""
    literal = parse_ip_literal(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = parse_ip_literal(str(sockaddr[0]))
        if address is not None and address not in addresses:
            addresses.append(address)
    return addresses


LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")


def deployment_networks() -> list[IPNetwork]:
    """OUTBOUND_ALLOWED_NETWORKS: comma-separated CIDRs this deployment may reach anyway, and
    the loopback ranges when OUTBOUND_ALLOW_LOOPBACK is on (local development)."""
    configured = settings.OUTBOUND_ALLOWED_NETWORKS
    if isinstance(configured, str):
        configured = configured.split(",")
    try:
        networks = parse_networks(configured)
    except ValueError as exc:
        raise ImproperlyConfigured(f"OUTBOUND_ALLOWED_NETWORKS: {exc}") from None
    if settings.OUTBOUND_ALLOW_LOOPBACK:
        networks += parse_networks(LOOPBACK_NETWORKS)
    return networks


def organization_networks(organization_id: int) -> list[IPNetwork]:
    """The organization's NetworkAllowance rows (synchronous: save-time checks)."""
    return _organization_networks(organization_id)


def _organization_networks(organization_id: int) -> list[IPNetwork]:
    from vault.models import NetworkAllowance

    cidrs = NetworkAllowance.objects.filter(organization_id=organization_id).values_list(
        "cidr", flat=True
    )
    return parse_networks(cidrs)


async def allowed_networks(organization_id: int | None) -> list[IPNetwork]:
    networks = deployment_networks()
    if organization_id is not None:
        from servers.db import run as run_db

        networks += await run_db(_organization_networks, organization_id)
    return networks
