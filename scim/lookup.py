"""Finding a directory's Users and Groups, the same way for both: one by its id (404 otherwise),
and a page of them by SCIM filter, startIndex and count. Plain `attribute eq "value"` filters on
an indexed field become a database query; any other filter is matched against every resource."""

import uuid
from collections.abc import Callable, Collection
from typing import Any

from django.db.models import QuerySet

from .errors import ScimError, not_found
from .filters import FilterError, compile_filter, equality
from .resources import MAX_RESULTS


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def by_uid(rows: QuerySet, *, kind: str, uid: str) -> Any:
    """The row with this SCIM id; ScimError 404 naming the `kind` when there is none."""
    found = rows.filter(uid=uid).first() if is_uuid(uid) else None
    if found is None:
        raise not_found(kind, uid)
    return found


def page_of(
    rows: QuerySet,
    *,
    filter_text: str | None,
    start: int,
    count: int,
    fast: dict[str, str],
    resource: Callable[[Any], dict],
    hidden: Collection[str] = (),
) -> tuple[list[dict], int]:
    """(resources of the page, total matching): startIndex is 1-based, count at most
    MAX_RESULTS. `fast` maps a filter attribute (lowercase) to its lookup on `rows`; a filter
    sees the whole resource, the page leaves out the `hidden` attributes."""
    count = max(0, min(count, MAX_RESULTS))
    start = max(1, start)
    if filter_text:
        equal = equality(filter_text)
        if equal is not None and equal[0] in fast and isinstance(equal[1], str):
            if equal[0] == "id" and not is_uuid(equal[1]):
                return [], 0
            rows = rows.filter(**{fast[equal[0]]: equal[1]})
        else:
            try:
                matches = compile_filter(filter_text)
            except FilterError as exc:
                raise ScimError(400, str(exc), "invalidFilter") from None
            found = [r for r in (resource(row) for row in rows) if matches(r)]
            return [_without(r, hidden) for r in found[start - 1 : start - 1 + count]], len(found)
    total = rows.count()
    page = rows[start - 1 : start - 1 + count] if count else []
    return [_without(resource(row), hidden) for row in page], total


def _without(resource: dict, hidden: Collection[str]) -> dict:
    for name in hidden:
        resource.pop(name, None)
    return resource
