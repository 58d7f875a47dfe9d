from django.core.management.base import CommandError, CommandParser

from servers.publishing import PublishError, rollback

from .publish import find_server

NAME = "rollback"
HELP = "Publish an old version again as the newest one, and reset the draft to it."


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")
    parser.add_argument("to_version", metavar="X.Y.Z")


def handle(command, options) -> None:
    server = find_server(options["slug"])
    try:
        published = rollback(server, options["to_version"])
    except PublishError as exc:
        raise CommandError(str(exc)) from None
    command.stdout.write(
        f"Rolled {server.slug} back to {options['to_version']}: "
        f"published as {server.slug}@{published.version}, draft reset"
    )
