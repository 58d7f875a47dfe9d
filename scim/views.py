"""/scim/v2/: thin views over scim/users.py and scim/groups.py. Every request carries the
organization's SCIM bearer token (scim/tokens.py); answers are application/scim+json, errors in
the SCIM error schema (RFC 7644 §3.12), never a traceback."""

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from audit.context import Actor, acting, request_address

from . import errors, groups, resources, tokens, users
from .errors import ScimError
from .models import Directory

log = logging.getLogger(__name__)


def _answer(status: int, body: dict | None = None, headers: dict | None = None) -> HttpResponse:
    response = HttpResponse(
        orjson.dumps(body) if body is not None else b"",
        status=status,
        content_type=resources.CONTENT_TYPE,
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _error(exc: ScimError) -> HttpResponse:
    return _answer(exc.status, resources.error_body(exc.status, exc.detail, exc.scim_type))


def scim_view(methods: set[str]) -> Callable:
    def decorate(view: Callable) -> Callable:
        @csrf_exempt
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method not in methods:
                return _answer(
                    405,
                    resources.error_body(405, f"{request.method} is not supported here"),
                    {"Allow": ", ".join(sorted(methods))},
                )
            directory = tokens.authenticate(request.headers.get("Authorization"))
            if directory is None:
                return _answer(
                    401,
                    resources.error_body(401, "A valid SCIM bearer token is required"),
                    {"WWW-Authenticate": 'Bearer realm="scim"'},
                )
            body = None
            if request.method in ("POST", "PUT", "PATCH"):
                try:
                    body = orjson.loads(request.body or b"null")
                except orjson.JSONDecodeError:
                    return _error(ScimError(400, "The body is not JSON", "invalidSyntax"))
            actor = Actor(
                "system", f"scim:{directory.pk}", "SCIM provisioning", request_address(request)
            )
            try:
                with acting(actor):
                    return view(request, directory, body, *args, **kwargs)
            except ScimError as exc:
                return _error(exc)

        return wrapper

    return decorate


def _paging(request: HttpRequest) -> tuple[int, int]:
    try:
        start = int(request.GET.get("startIndex", "1"))
        count = int(request.GET.get("count", str(resources.MAX_RESULTS)))
    except ValueError:
        raise ScimError(400, "startIndex and count are integers", "invalidValue") from None
    return max(1, start), max(0, count)


@scim_view({"GET"})
def service_provider_config(request, directory: Directory, body):
    return _answer(200, resources.service_provider_config())


def _one_or_all(found: list[dict], kind: str, wanted: str | None) -> HttpResponse:
    """All of `found` as a ListResponse, or the one whose id is `wanted` (404 naming `kind`)."""
    if wanted is None:
        return _answer(200, resources.list_response(found, total=len(found), start=1))
    for item in found:
        if item["id"] == wanted:
            return _answer(200, item)
    raise errors.not_found(kind, wanted)


@scim_view({"GET"})
def schemas(request, directory: Directory, body, schema_id: str | None = None):
    return _one_or_all(resources.schemas(), "Schema", schema_id)


@scim_view({"GET"})
def resource_types(request, directory: Directory, body, type_id: str | None = None):
    return _one_or_all(resources.resource_types(), "ResourceType", type_id)


def _created(resource: dict) -> HttpResponse:
    return _answer(201, resource, {"Location": resource["meta"]["location"]})


def _listed(request: HttpRequest, listing: Callable, **criteria) -> HttpResponse:
    """The ListResponse of the page `listing` (users_list, groups_list) finds for the request's
    filter, startIndex and count."""
    start, count = _paging(request)
    page, total = listing(
        filter_text=request.GET.get("filter"), start=start, count=count, **criteria
    )
    return _answer(200, resources.list_response(page, total=total, start=start))


# What PUT, PATCH and DELETE call for each kind of resource, and the keyword those services take
# the resource under.
_WRITES: dict[str, tuple[str, dict[str, Callable]]] = {
    "User": (
        "scim_user",
        {"PUT": users.user_replace, "PATCH": users.user_patch, "DELETE": users.user_delete},
    ),
    "Group": (
        "group",
        {"PUT": groups.group_replace, "PATCH": groups.group_patch, "DELETE": groups.group_delete},
    ),
}


def _written(request: HttpRequest, directory: Directory, body, kind: str, found: Any) -> Any:
    """`found` as the request leaves it: replaced (PUT) or patched (PATCH), None once deleted
    (DELETE), as it was (GET)."""
    keyword, writes = _WRITES[kind]
    write = writes.get(request.method or "")
    if write is None:
        return found
    if request.method == "DELETE":
        write(directory=directory, **{keyword: found})
        return None
    return write(directory=directory, body=body, **{keyword: found})


@scim_view({"GET", "POST"})
def user_list(request, directory: Directory, body):
    if request.method == "POST":
        return _created(resources.user_resource(users.user_create(directory=directory, body=body)))
    return _listed(request, users.users_list, directory=directory)


@scim_view({"GET", "PUT", "PATCH", "DELETE"})
def user_detail(request, directory: Directory, body, uid: str):
    found = users.user_get(directory=directory, uid=uid)
    found = _written(request, directory, body, "User", found)
    return _answer(204) if found is None else _answer(200, resources.user_resource(found))


def _with_members(request: HttpRequest) -> bool:
    excluded = request.GET.get("excludedAttributes", "")
    return "members" not in {a.strip().lower() for a in excluded.split(",")}


@scim_view({"GET", "POST"})
def group_list(request, directory: Directory, body):
    if request.method == "POST":
        created = groups.group_create(directory=directory, body=body)
        return _created(resources.group_resource(created))
    return _listed(request, groups.groups_list, directory=directory, members=_with_members(request))


@scim_view({"GET", "PUT", "PATCH", "DELETE"})
def group_detail(request, directory: Directory, body, uid: str):
    found = groups.group_get(directory=directory, uid=uid)
    found = _written(request, directory, body, "Group", found)
    if found is None or (request.method == "PATCH" and not _with_members(request)):
        return _answer(204)
    return _answer(200, resources.group_resource(found, members=_with_members(request)))


def not_found(request, path: str = ""):
    return _answer(404, resources.error_body(404, "No such SCIM endpoint"))
