"""Finding servers and tools of one organization by a few typed letters: what the dashboard's
command palette (Ctrl-K) lists. The caller decides the organization (after the role check);
nothing here reaches past it."""

from dataclasses import dataclass

from django.db.models import Case, IntegerField, Q, Value, When

from accounts.models import Organization

from .models import Server, Tool


@dataclass(frozen=True)
class Found:
    kind: str  # "server" or "tool"
    name: str
    detail: str
    server_slug: str
    pk: int


def find_in_organization(*, organization: Organization, text: str, limit: int = 8) -> list[Found]:
    """Servers, then tools, whose name (or title, slug, description) holds `text`; names that
    start with it first. Empty text finds the organization's servers."""
    text = text.strip()[:100]
    servers = Server.objects.filter(organization=organization)
    if text:
        servers = servers.filter(
            Q(name__icontains=text) | Q(slug__icontains=text) | Q(title__icontains=text)
        )
    servers = servers.annotate(rank=_starts(text, "name")).order_by("rank", "name")[:limit]
    found = [
        Found("server", s.title or s.name, s.get_status_display(), s.slug, s.pk) for s in servers
    ]
    if not text:
        return found
    tools = (
        Tool.objects.filter(server__organization=organization)
        .filter(Q(name__icontains=text) | Q(title__icontains=text) | Q(description__icontains=text))
        .select_related("server")
        .annotate(rank=_starts(text, "name"))
        .order_by("rank", "name", "server__name")[: limit * 2]
    )
    found += [
        Found("tool", t.name, t.server.title or t.server.name, t.server.slug, t.pk) for t in tools
    ]
    return found


def _starts(text: str, field: str) -> Case:
    return Case(
        When(**{f"{field}__istartswith": text}, then=Value(0)),
        default=Value(1),
        output_field=IntegerField(),
    )
