from django.core.management.base import CommandError, CommandParser

from servers.definition import template_name_problems
from servers.models import Server
from servers.publishing import PublishError, publish

NAME = "publish"
HELP = "Freeze the server's draft as a published version (default: the next patch version)."


def find_server(slug: str) -> Server:
    server = Server.objects.filter(slug=slug).select_related("organization").first()
    if server is None:
        raise CommandError(f"no server {slug!r}")
    return server


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")
    parser.add_argument("--version", dest="publish_version", metavar="X.Y.Z")


def handle(command, options) -> None:
    server = find_server(options["slug"])
    try:
        published = publish(server, options.get("publish_version"))
    except PublishError as exc:
        raise CommandError(str(exc)) from None
    command.stdout.write(f"Published {server.slug}@{published.version}")
    # Saved before templates were checked at save time: published, but said out loud.
    for problem in template_name_problems(published.definition):
        command.stderr.write(f"warning: {problem}")
