"""Which IP addresses an outbound fetch may reach, and how odd host notations are read.

An address is refused when it is not a public unicast address: loopback, private, link-local,
carrier-grade NAT, multicast, unspecified, reserved, documentation and benchmark ranges all
fail. IPv6 addresses that embed an IPv4 address (mapped, compatible, 6to4, NAT64, Teredo) are
judged by the IPv4 address they lead to as well, since that is where the packets may end up.
Cloud metadata endpoints are refused even when an allow-list would admit their range: no
self-hosted use needs the instance's credentials.
"""

import ipaddress
import re
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task credentials
        "169.254.169.253",  # AWS DNS / time
        "100.100.100.200",  # Alibaba Cloud
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",
    )
)
METADATA_HOSTNAMES = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

_IPV4_PART = re.compile(r"^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$", re.IGNORECASE)


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host string denotes by itself, or None if it is a name to resolve.

    Besides the dotted quad this reads what inet_aton accepts and resolvers pass through:
    decimal (2130706433), octal (0177.0.0.1), hex (0x7f.0.0.1) and short forms (127.1).
    """
    host = host.strip().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if "%" in host:  # a zone index only makes sense for link-local addresses
        host = host.split("%", 1)[0]
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    return _parse_loose_ipv4(host)


def _parse_loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    try:
        numbers = [_int(p) for p in parts]
    except ValueError:
        return None
    # The last part fills all the bytes the earlier parts did not name (inet_aton rules).
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def _int(part: str) -> int:
    if part.lower() in ("0x", ""):
        raise ValueError(part)
    if part.lower().startswith("0x"):
        return int(part, 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part, 10)


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries, for the transition forms that route to it."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in net for net in NAT64):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in IPV4_COMPATIBLE and int(address) > 1:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal_reason(address: IPAddress) -> str | None:
    """Why an address may not be fetched (a short phrase), or None if it is public."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    inner = embedded_ipv4(address)
    if inner is not None:
        reason = refusal_reason(inner)
        return f"{reason} (embedded in an IPv6 address)" if reason else None
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in CGNAT:
        return "a carrier-grade NAT address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


def parse_networks(items: Iterable[str]) -> list[IPNetwork]:
    """CIDRs (or single addresses) from configuration; a bad entry is a configuration error."""
    networks = []
    for item in items:
        item = item.strip()
        if item:
            networks.append(ipaddress.ip_network(item, strict=False))
    return networks


def is_admitted(address: IPAddress, allowed: Iterable[IPNetwork]) -> bool:
    """An allow-list entry admits the address itself or the IPv4 address it embeds."""
    if address in METADATA_ADDRESSES:
        return False
    candidates = [address]
    inner = embedded_ipv4(address)
    if inner is not None:
        if inner in METADATA_ADDRESSES:
            return False
        candidates.append(inner)
    return any(c.version == net.version and c in net for c in candidates for net in allowed)


def check_address(address: IPAddress, allowed: Iterable[IPNetwork] = ()) -> str | None:
    """None when the address may be fetched; otherwise the reason it may not."""
    reason = refusal_reason(address)
    if reason is None or is_admitted(address, allowed):
        return None
    return reason
