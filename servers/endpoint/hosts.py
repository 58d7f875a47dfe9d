"""Which Host and Origin headers a request to /mcp/<slug> may carry: the first two checks of the
gate (servers/endpoint/gate.py), kept apart because the Host answer is remembered per header."""

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http.request import split_domain_port, validate_host

# Host header -> allowed, for the hosts seen lately: every request of a client sends the same
# Host, and Django's parse and match of it were a tenth of the gate. Bounded (the header is the
# client's to choose) and emptied when ALLOWED_HOSTS changes (override_settings in tests).
_HOSTS_SEEN: dict[str, bool] = {}
MAX_HOSTS_SEEN = 256


def host_allowed(host: str) -> bool:
    allowed = _HOSTS_SEEN.get(host)
    if allowed is None:
        domain, _port = split_domain_port(host)
        allowed = bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)
        if len(_HOSTS_SEEN) >= MAX_HOSTS_SEEN:
            _HOSTS_SEEN.clear()
        _HOSTS_SEEN[host] = allowed
    return allowed


@receiver(setting_changed)
def _forget_hosts(*, setting: str, **kwargs: Any) -> None:
    if setting == "ALLOWED_HOSTS":
        _HOSTS_SEEN.clear()


def origin_allowed(origin: str, host: str, allowed_origins: Iterable[str]) -> bool:
    if origin in settings.MCP_ALLOWED_ORIGINS or origin in allowed_origins:
        return True
    if "*" in settings.MCP_ALLOWED_ORIGINS or "*" in allowed_origins:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()
