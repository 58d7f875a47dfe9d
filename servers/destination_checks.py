"""Save-time warnings for tools whose URL the SSRF guard will refuse when they are called.

Saving such a tool is allowed (the operator may open the network later, or the URL may be meant
for another deployment), but the person saving it must hear now, not from a failed call later,
that calls will be refused and who can change that. Only what is certain without the network is
judged: IP literals in any notation and `localhost` names. Other names are resolved when the tool
is called, where the guard judges every address they resolve to.
"""

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from . import kinds
from .outbound import resolver
from .outbound.addresses import (
    IPAddress,
    IPNetwork,
    check_address,
    parse_ip_literal,
)
from .outbound.allowance import how_to_allow

LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def _address_of(host: str) -> IPAddress | None:
    name = host.rstrip(".").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return parse_ip_literal("127.0.0.1")
    return parse_ip_literal(name)


def _urls(tool: dict[str, Any], server_http: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field path, URL) of every fixed destination the tool calls."""
    config = tool.get("config")
    if not isinstance(config, dict):
        return
    kind = kinds.find_kind(tool.get("kind", kinds.DEFAULT_KIND))
    if kind is None:
        return
    for path, url in kind.destinations(config):
        yield path, _absolute(url, server_http)


def _absolute(url: Any, server_http: dict[str, Any]) -> str:
    if not isinstance(url, str):
        return ""
    base = server_http.get("baseUrl") if isinstance(server_http, dict) else None
    if url.startswith("/") and isinstance(base, str):
        return base.rstrip("/") + url
    return url


def _host(url: str) -> str | None:
    if not url.startswith(("http://", "https://")):
        return None
    if "{{" in url.split("/", 3)[2]:
        return None  # the host comes from arguments: judged per call
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def allowed_networks(organization_id: int | None) -> list[IPNetwork]:
    networks = resolver.deployment_networks()
    if organization_id is not None:
        networks += resolver.organization_networks(organization_id)
    return networks


def refusal_warnings(
    tool: dict[str, Any],
    *,
    server_http: dict[str, Any] | None = None,
    networks: Iterable[IPNetwork] = (),
) -> list[str]:
    """Warnings for a tool (in the definition format) whose calls the guard will refuse."""
    found = []
    for path, url in _urls(tool, server_http or {}):
        host = _host(url)
        address = _address_of(host) if host else None
        if address is None:
            continue
        reason = check_address(address, list(networks))
        if reason is None:
            continue
        shown = host if host == str(address) else f"{host} ({address})"
        text = f"{path}: {shown} is {reason}, so calls of this tool will be refused."
        hint = how_to_allow(address, reason)
        found.append(f"{text} {hint}" if hint else text)
    return found


def tool_warnings(
    tool: dict[str, Any], server, *, networks: list[IPNetwork] | None = None
) -> list[str]:
    """refusal_warnings for a tool of a saved server, with its allow-lists as they are now
    (`networks` when the caller has read them already)."""
    kind = kinds.find_kind(tool.get("kind"))
    if kind is None or not kind.has_destinations:
        return []
    if networks is None:
        networks = allowed_networks(server.organization_id)
    return refusal_warnings(tool, server_http=server.http or {}, networks=networks)


def definition_warnings(definition: dict[str, Any], organization_id: int | None) -> list[str]:
    """Every tool's warnings in a whole definition, each prefixed with the tool's place."""
    tools = definition.get("tools") if isinstance(definition, dict) else None
    if not isinstance(tools, list):
        return []
    server_http = definition.get("http") if isinstance(definition.get("http"), dict) else {}
    networks = allowed_networks(organization_id)
    found = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        for warning in refusal_warnings(tool, server_http=server_http, networks=networks):
            found.append(f"tools[{index}] ({tool.get('name', '?')}).{warning}")
    return found
