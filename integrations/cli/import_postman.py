"""`manage.py server import-postman FILE|URL --server SLUG --owner EMAIL [--select ...] [--preview]`"""

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from integrations.importers import ImportFailed, parse_postman
from integrations.importers.sources import read_file

from .import_openapi import add_common_arguments, run

NAME = "import-postman"
HELP = "Preview or import the requests of a Postman 2.1 collection as draft http tools."


def add_arguments(parser: CommandParser) -> None:
    add_common_arguments(parser)
    parser.add_argument(
        "--environment", help="a Postman environment export whose values fill the variables"
    )
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a variable value (repeatable)",
    )


def variables(options) -> dict:
    values: dict = {}
    if options.get("environment"):
        try:
            environment = read_file(Path(options["environment"]))
        except ImportFailed as exc:
            raise CommandError(f"--environment: {exc}") from None
        for entry in environment.get("values") or []:
            if isinstance(entry, dict) and entry.get("key") and entry.get("enabled", True):
                values[str(entry["key"])] = str(entry.get("value") or "")
    for item in options.get("var") or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--var: {item!r} is not NAME=VALUE")
        values[name.strip()] = value
    return values


def handle(command, options) -> None:
    values = variables(options)
    run(
        command,
        options,
        lambda source, organization_id: parse_postman(
            source,
            variables=values,
            secret_prefix=options.get("secret_prefix"),
            organization_id=organization_id,
        ),
    )
