"""Published versions: immutable snapshots of a server's whole definition.

Edits change the draft rows; `publish` freezes `export_definition(server)` under a semantic
version. `/mcp/<slug>` serves the latest published version and `/mcp/<slug>@X.Y.Z` a pinned one,
so a pinned client never sees a description change under it.
"""

import json
import re

from django.db import IntegrityError, transaction

from audit import events as audit_events

from . import secret_reach
from .definition import DefinitionError, export_definition, import_definition
from .models import Server, ServerVersion

SEMVER_RE = re.compile(r"^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$")
FIRST_VERSION = "1.0.0"
# The parts of a definition whose items are diffed one by one, keyed by this field.
DIFFED_LISTS = {
    "tools": "name",
    "resources": "uri",
    "resourceTemplates": "uriTemplate",
    "prompts": "name",
}
_SINGULAR = {
    "tools": "tool",
    "resources": "resource",
    "resourceTemplates": "resource template",
    "prompts": "prompt",
}


class PublishError(Exception):
    """A publish, diff or rollback that cannot be done; the message says why."""


class PublishRefused(PublishError):
    """The acting person may not publish this: a tool reaches secrets nobody approved
    (servers/secret_reach.py). The API answers it 403."""


def parse_version(version: str) -> tuple[int, int, int]:
    match = SEMVER_RE.match(version or "")
    if not match:
        raise PublishError(f"version: {version!r} is not a semantic version X.Y.Z")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def versions(server: Server) -> list[ServerVersion]:
    """Published versions, newest version number first."""
    return sorted(
        server.versions.all(), key=lambda v: (parse_version(v.version), v.pk), reverse=True
    )


def latest(server: Server) -> ServerVersion | None:
    found = versions(server)
    return found[0] if found else None


def get_version(server: Server, version: str) -> ServerVersion:
    found = server.versions.filter(version=version).first()
    if found is None:
        raise PublishError(f"{server.slug} has no published version {version!r}")
    return found


def next_version(server: Server) -> str:
    newest = latest(server)
    if newest is None:
        return FIRST_VERSION
    major, minor, patch = parse_version(newest.version)
    return f"{major}.{minor}.{patch + 1}"


def _publish_definition(
    server: Server, definition: dict, version: str | None, user, rollback_from=None
) -> ServerVersion:
    with transaction.atomic():
        # Serializes publishes of one server, so two "next version" picks cannot collide.
        Server.objects.select_for_update().filter(pk=server.pk).first()
        if version is None:
            version = next_version(server)
        else:
            parse_version(version)
            if server.versions.filter(version=version).exists():
                raise PublishError(f"version: {server.slug}@{version} is already published")
        try:
            secret_reach.require_approved(server=server, definition=definition, user=user)
        except secret_reach.ReachNotApproved as exc:
            raise PublishRefused(str(exc)) from None
        # serverInfo.version of the published definition is the version clients pinned to.
        frozen = {**definition, "version": version}
        try:
            published = ServerVersion.objects.create(
                server=server, version=version, definition=frozen, published_by=user
            )
        except IntegrityError:
            raise PublishError(f"version: {server.slug}@{version} is already published") from None
        audit_events.published(published, rollback_from=rollback_from)
        return published


def publish(server: Server, version: str | None = None, user=None) -> ServerVersion:
    """Freeze the draft as `version` (default: the latest published one with its patch bumped,
    or 1.0.0 for the first)."""
    return _publish_definition(server, export_definition(server), version, user)


def publish_import(server: Server, user=None) -> ServerVersion | None:
    """What `server import` does unless --draft: publish the imported draft under its own
    `version` when that is a free X.Y.Z, else the next patch version. Re-importing what the
    latest version already serves, under a version already used, publishes nothing."""
    draft = export_definition(server)
    wanted = draft.get("version") or ""
    free = bool(SEMVER_RE.match(wanted)) and not server.versions.filter(version=wanted).exists()
    newest = latest(server)
    unchanged = newest is not None and _without_version(newest.definition) == _without_version(
        draft
    )
    if unchanged and not free:
        return None
    return _publish_definition(server, draft, wanted if free else None, user)


def _without_version(definition: dict) -> dict:
    return {key: value for key, value in definition.items() if key != "version"}


def served_definition(server: Server, version: str | None = None) -> dict | None:
    """What clients get: the pinned version's definition, else the latest published one; None
    when nothing is published (or the pinned version does not exist)."""
    if version is not None:
        found = server.versions.filter(version=version).first()
    else:
        found = latest(server)
    return None if found is None else found.definition


def definition_to_serve(server: Server, version: str | None = None) -> dict | None:
    """The definition /mcp/<slug> (version None) or /mcp/<slug>@<version> serves.

    The contract (tools, resources, prompts, descriptions, serverInfo) comes from the published
    version; how the server is operated (status, auth, allowed origins) always comes from the
    live row, so pausing a server or changing its auth also applies to pinned clients. A server
    that has never been published serves its draft, so servers created before publishing existed
    (or by scripts that import with --draft and never publish) keep working. None for an unknown
    pinned version.
    """
    definition = served_definition(server, version)
    if definition is None:
        if server.versions.exists():
            return None
        draft = export_definition(server)
        # Never published: the draft is served, under the version it names.
        return draft if version in (None, draft.get("version")) else None
    return {**definition, **live_settings(server)}


def live_settings(server: Server) -> dict:
    """The fields of the definition served from the live row, whatever version is published."""
    return {
        "slug": server.slug,
        "status": server.status,
        "auth": server.auth_mode,
        "allowedOrigins": list(server.allowed_origins or []),
        "rateLimitPerMinute": server.rate_limit_per_minute,
        "logArguments": server.log_arguments,
        # How the server treats agents is operated live too (the dashboard's settings page).
        "agents": dict(server.agents or {}),
    }


def unpublished_changes(server: Server) -> tuple[ServerVersion | None, list[str]]:
    """(latest published version or None, what publishing the draft would change for clients).

    Compared with what is served (definition_to_serve), not with the stored snapshot: a setting
    operated live (auth, status, origins...) is already served from the row, so it is never
    listed as waiting for a publish."""
    newest = latest(server)
    if newest is None:
        return None, []
    live = live_settings(server)
    served = {**newest.definition, **live}
    return newest, diff_definitions(served, {**export_definition(server), **live})


def rollback(server: Server, version: str, user=None) -> ServerVersion:
    """Publish a new version whose definition is the old one's, and make the draft equal to it,
    so the next edit starts from what is served."""
    old = get_version(server, version)
    definition = {**old.definition, "slug": server.slug}
    with transaction.atomic():
        published = _publish_definition(server, definition, None, user, rollback_from=version)
        try:
            import_definition(
                {**definition, "version": published.version},
                server.organization,
                replace=True,
                user=user,
                # The version was served as it is: restoring it is not the time to refuse it.
                template_names=False,
            )
        except DefinitionError as exc:
            raise PublishError(f"cannot restore the draft from {version}: {exc}") from None
    return published


# --- diff ---------------------------------------------------------------------------------------


def _describe(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 80 else text[:77] + "..."


def _field_changes(old: dict, new: dict) -> list[str]:
    fields = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            fields.append(key)
    return fields


def diff_definitions(a: dict, b: dict) -> list[str]:
    """Readable differences from definition `a` to `b`, one line each: server fields first, then
    each list in definition order, removals, additions and changes sorted by name."""
    lines = []
    for key in sorted((set(a) | set(b)) - set(DIFFED_LISTS) - {"version"}):
        if a.get(key) != b.get(key):
            lines.append(f"server {key}: {_describe(a.get(key))} -> {_describe(b.get(key))}")
    for key, ident in DIFFED_LISTS.items():
        label = _SINGULAR[key]
        old = {item[ident]: item for item in a.get(key) or []}
        new = {item[ident]: item for item in b.get(key) or []}
        lines += [f"{label} removed: {name}" for name in sorted(old.keys() - new.keys())]
        lines += [f"{label} added: {name}" for name in sorted(new.keys() - old.keys())]
        for name in sorted(old.keys() & new.keys()):
            changed = _field_changes(old[name], new[name])
            if changed:
                lines.append(f"{label} changed: {name} ({', '.join(changed)})")
        if [n for n in old if n in new] != [n for n in new if n in old]:
            lines.append(f"{label}s reordered")
    return lines


def diff(server: Server, a: str, b: str) -> list[str]:
    """What changed from published version `a` to `b` (either may be "draft")."""

    def definition(version: str) -> dict:
        if version == "draft":
            return export_definition(server)
        return get_version(server, version).definition

    return diff_definitions(definition(a), definition(b))
