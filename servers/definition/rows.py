"""Between a definition dict and the database rows: export (rows -> normal form) and import
(dict -> rows, in one transaction)."""

from django.db import IntegrityError, transaction

from ..models import Server
from .errors import DefinitionError
from .fields import PARTS, SERVER_ALWAYS, SERVER_FIELDS
from .validation import validate_definition

# --- export and normal form ---------------------------------------------------------------------


def _canonical(values: dict, fields, always) -> dict:
    out = {}
    for key, _, default in fields:
        value = values.get(key, default)
        if key in always or value != default:
            out[key] = value
    return out


def normalize_definition(data: dict) -> dict:
    """The canonical form of a valid definition: what an export of its import gives back."""
    out = _canonical(data, SERVER_FIELDS, SERVER_ALWAYS)
    for key, (_, fields, always, _) in PARTS.items():
        items = [_canonical(item, fields, always) for item in data.get(key) or []]
        if items:
            out[key] = items
    return out


def export_definition(server: Server) -> dict:
    values = {key: getattr(server, attr) for key, attr, _ in SERVER_FIELDS}
    out = _canonical(values, SERVER_FIELDS, SERVER_ALWAYS)
    for key, (_, fields, always, related) in PARTS.items():
        rows = getattr(server, related).order_by("position", "id")
        items = [
            _canonical({k: getattr(row, attr) for k, attr, _ in fields}, fields, always)
            for row in rows
        ]
        if items:
            out[key] = items
    return out


# --- import -------------------------------------------------------------------------------------


def _row_values(item: dict, fields) -> dict:
    values = {}
    for key, attr, default in fields:
        value = item.get(key, default)
        if value is None and default is not None:
            value = default
        values[attr] = value
    return values


def _server_row(organization, slug: str, values: dict, replace: bool) -> Server:
    """The server's row, created or (with `replace`) rewritten with its parts deleted; inside
    the import's transaction, the row locked."""
    server = Server.objects.select_for_update().filter(slug=slug).first()
    if server is not None and server.organization_id != organization.pk:
        raise DefinitionError("slug: already taken")
    if server is not None and not replace:
        raise DefinitionError(
            f"slug: this organization already has a server {slug!r}; "
            "import with --replace to replace its definition"
        )
    if server is None:
        return Server.objects.create(organization=organization, slug=slug, **values)
    for attr, value in values.items():
        setattr(server, attr, value)
    server.save()
    for _, _, _, related in PARTS.values():
        getattr(server, related).all().delete()
    return server


def import_definition(
    data: dict, organization, *, replace: bool = False, user=None, template_names: bool = True
) -> Server:
    """Create a server (or with `replace`, rewrite one of the same organization) from a dict.
    `template_names=False`: see validate_definition."""
    errors = validate_definition(data, template_names=template_names)
    if errors:
        raise DefinitionError(errors)
    if user is not None and not organization.memberships.filter(user=user).exists():
        raise DefinitionError("organization: you are not a member of this organization")
    slug = data["slug"]
    server_values = {
        attr: data.get(key, default) for key, attr, default in SERVER_FIELDS if key != "slug"
    }
    try:
        with transaction.atomic():
            server = _server_row(organization, slug, server_values, replace)
            for key, (model, fields, _, _) in PARTS.items():
                for position, item in enumerate(data.get(key) or []):
                    model.objects.create(
                        server=server, position=position, **_row_values(item, fields)
                    )
    except IntegrityError:
        # Another import took the slug between our check and our insert.
        raise DefinitionError("slug: already taken") from None
    return server
