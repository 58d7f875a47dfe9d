"""Which Host and Origin headers a request to /mcp/<slug> may carry: the first two checks of the
gate (gateway/endpoint/gate.py), kept apart because the Host answer is remembered per header."""

import functools
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http.request import split_domain_port, validate_host

# The hosts judged lately are remembered: every request of a client sends the same Host, and
# Django's parse and match of it were a tenth of the gate. Bounded (the header is the client's
# to choose) and forgotten when ALLOWED_HOSTS changes (override_settings in tests).
MAX_HOSTS_SEEN = 256


@functools.lru_cache(maxsize=MAX_HOSTS_SEEN)
def host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


@receiver(setting_changed)
def _forget_hosts(*, setting: str, **kwargs: Any) -> None:
    if setting == "ALLOWED_HOSTS":
        host_allowed.cache_clear()


def origin_allowed(origin: str, host: str, allowed_origins: Iterable[str]) -> bool:
    if origin in settings.MCP_ALLOWED_ORIGINS or origin in allowed_origins:
        return True
    if "*" in settings.MCP_ALLOWED_ORIGINS or "*" in allowed_origins:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()
