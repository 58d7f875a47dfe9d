from django.core.management.base import CommandError, CommandParser

from servers.publishing import PublishError, diff

from .publish import find_server

NAME = "diff"
HELP = "Show what changed between two published versions (either may be 'draft')."


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")
    parser.add_argument("a", metavar="A", help="a version, or 'draft'")
    parser.add_argument("b", metavar="B", help="a version, or 'draft'")


def handle(command, options) -> None:
    server = find_server(options["slug"])
    try:
        lines = diff(server, options["a"], options["b"])
    except PublishError as exc:
        raise CommandError(str(exc)) from None
    if not lines:
        command.stdout.write(f"No differences between {options['a']} and {options['b']}.")
    for line in lines:
        command.stdout.write(line)
