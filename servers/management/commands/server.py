from django.core.management.base import BaseCommand, CommandError, CommandParser

from servers.cli import subcommands


class Command(BaseCommand):
    help = "Manage servers: " + ", ".join(m.NAME for m in subcommands())

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
        sub.required = True
        for module in subcommands():
            module.add_arguments(sub.add_parser(module.NAME, help=module.HELP))

    def handle(self, *args, **options):
        for module in subcommands():
            if options["subcommand"] == module.NAME:
                return module.handle(self, options)
        raise CommandError(f"unknown subcommand {options['subcommand']!r}")
