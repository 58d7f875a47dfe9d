"""Who is acting, and from where, for the audit rows written while a request is handled.

`AuditContextMiddleware` keeps the current Django request in a context variable; the actor is
read from it when a row is written (not when the request arrives), because the management API
authenticates inside the view (DRF sets `request.user` and `request.auth` on the Django request
then). Code that acts for someone outside a request (a Celery task, a command) wraps its work in
`acting(...)`; everything else is the system.
"""

import ipaddress
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_request: ContextVar = ContextVar("audit_request", default=None)
_actor: ContextVar = ContextVar("audit_actor", default=None)


@dataclass(frozen=True)
class Actor:
    type: str
    id: str = ""
    label: str = ""
    address: str | None = None


SYSTEM = Actor("system", "", "system")


def user_actor(user, address=None) -> Actor:
    return Actor("user", str(user.pk), user.email, address)


class AuditContextMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextmanager
def acting(actor: Actor):
    token = _actor.set(actor)
    try:
        yield actor
    finally:
        _actor.reset(token)


def clean_address(value) -> str | None:
    try:
        return str(ipaddress.ip_address(str(value).strip())) if value else None
    except ValueError:
        return None


def request_address(request) -> str | None:
    return clean_address(request.META.get("REMOTE_ADDR")) if request is not None else None


def current_request():
    return _request.get()


def current_actor() -> Actor:
    explicit = _actor.get()
    if explicit is not None:
        return explicit
    request = _request.get()
    if request is None:
        return SYSTEM
    address = request_address(request)
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return Actor("system", "", "anonymous", address)
    auth = getattr(request, "auth", None)
    # The API's token model by name: the audit trail is domain, below the API.
    if getattr(getattr(auth, "_meta", None), "label", None) == "api.PersonalAccessToken":
        return Actor("token", str(auth.pk), f"{auth.name} ({user.email})", address)
    return user_actor(user, address)
