from django.core.management.base import CommandParser

from servers.publishing import latest, versions

from .publish import find_server

NAME = "versions"
HELP = "List a server's published versions, newest first."


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")


def handle(command, options) -> None:
    server = find_server(options["slug"])
    found = versions(server)
    if not found:
        command.stdout.write(
            f"{server.slug} has no published version (clients get 404 until one is)."
        )
        return
    newest = latest(server)
    for version in found:
        by = f"  by {version.published_by.email}" if version.published_by else ""
        mark = "  (served)" if version.pk == newest.pk else ""
        when = version.published_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        counts = ", ".join(
            f"{len(version.definition.get(key) or [])} {key}"
            for key in ("tools", "resources", "prompts")
        )
        command.stdout.write(f"{version.version}  {when}  {counts}{by}{mark}")
