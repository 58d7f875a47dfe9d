"""Throttles for logging in and password-reset mail, per account and per source address, and
for invitation mail, per invited address and per organization.

Counters are fixed windows in Redis (fakeredis in embedded mode), so every web process shares
them. They count by the address typed, whether or not an account has it, so the answers never
reveal which accounts exist. A locked login is refused even with the right password until the
window ends.

Why not django-axes: it makes `authenticate()` demand a request, which every `client.login()`
and command-line authentication would then have to pass, and it does not cover reset mail.
"""

import hashlib
import logging

from django.conf import settings
from redis.exceptions import RedisError

from infra import keys
from infra.redis import sync_client

log = logging.getLogger(__name__)


def _key(kind: str, scope: str, value: str) -> str:
    # Digests: the keys would otherwise list the email addresses people typed.
    digest = hashlib.sha256(value.strip().lower().encode()).hexdigest()[:32]
    return keys.throttle(kind, scope, digest)


def _blocked(limits: list[tuple[str, int]]) -> int:
    """Seconds until every counter is under its limit again; 0 when none is at it."""
    try:
        client = sync_client()
        with client.pipeline(transaction=False) as pipe:
            for key, _ in limits:
                pipe.get(key)
                pipe.ttl(key)
            replies = pipe.execute()
    except RedisError:
        # Logging in must not depend on Redis being up; the lock comes back with it.
        log.warning("login throttle unavailable (Redis error); not enforced", exc_info=True)
        return 0
    wait = 0
    for index, (_, limit) in enumerate(limits):
        count, ttl = replies[2 * index], replies[2 * index + 1]
        if count is not None and int(count) >= limit:
            wait = max(wait, ttl if ttl and ttl > 0 else 1)
    return wait


def _count(keys: list[str], window: int) -> None:
    try:
        with sync_client().pipeline(transaction=False) as pipe:
            for key in keys:
                # The window starts at the first event; later events do not extend it.
                pipe.set(key, 0, ex=window, nx=True)
                pipe.incr(key)
            pipe.execute()
    except RedisError:
        log.warning("login throttle unavailable (Redis error); not counted", exc_info=True)


def _login_limits(email: str, address: str) -> list[tuple[str, int]]:
    return [
        (_key("login", "account", email), settings.LOGIN_FAILURES_PER_ACCOUNT),
        (_key("login", "address", address), settings.LOGIN_FAILURES_PER_ADDRESS),
    ]


def login_blocked(*, email: str, address: str) -> int:
    return _blocked(_login_limits(email, address))


def login_failed(*, email: str, address: str) -> None:
    keys = [key for key, _ in _login_limits(email, address)]
    _count(keys, settings.LOGIN_THROTTLE_WINDOW_SECONDS)


def _reset_limits(email: str, address: str) -> list[tuple[str, int]]:
    return [
        (_key("reset", "account", email), settings.PASSWORD_RESETS_PER_ACCOUNT),
        (_key("reset", "address", address), settings.PASSWORD_RESETS_PER_ADDRESS),
    ]


def reset_allowed(*, email: str, address: str) -> bool:
    """Count a reset request; False once the address typed or the source is over its limit."""
    limits = _reset_limits(email, address)
    if _blocked(limits):
        return False
    _count([key for key, _ in limits], settings.PASSWORD_RESET_WINDOW_SECONDS)
    return True


def invitation_allowed(*, organization_id: int, email: str) -> bool:
    """Count an invitation; False once the address (from any organization) or the
    organization (to any address) has had its share of invitation mail this window."""
    limits = [
        (_key("invite", "account", email), settings.INVITATIONS_PER_ADDRESS),
        (_key("invite", "org", str(organization_id)), settings.INVITATIONS_PER_ORGANIZATION),
    ]
    if _blocked(limits):
        return False
    _count([key for key, _ in limits], settings.INVITATION_THROTTLE_WINDOW_SECONDS)
    return True


def source_address(request) -> str:
    # The ASGI server's client address (uvicorn --proxy-headers puts the forwarded one here
    # when the proxy is trusted); never a header a client could set for itself.
    return request.META.get("REMOTE_ADDR") or "unknown"


def clear() -> None:
    """Forget every counter (tests; an operator after an incident)."""
    client = sync_client()
    for key in client.scan_iter(match=keys.THROTTLE_PATTERN, count=1000):
        client.delete(key)
