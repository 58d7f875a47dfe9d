from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from servers.definition import dump_text, export_definition
from servers.models import Server

NAME = "export"
HELP = "Write a server's definition as YAML or JSON (to standard output or -o FILE)."


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")
    parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
    parser.add_argument("-o", "--output", help="file to write (default: standard output)")


def handle(command, options) -> None:
    server = Server.objects.filter(slug=options["slug"]).first()
    if server is None:
        raise CommandError(f"no server {options['slug']!r}")
    text = dump_text(export_definition(server), options["format"])
    if options.get("output"):
        Path(options["output"]).write_text(text, encoding="utf-8")
        command.stdout.write(f"Wrote {options['output']}")
    else:
        command.stdout.write(text, ending="")
