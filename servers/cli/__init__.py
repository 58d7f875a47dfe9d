"""Subcommands of `manage.py server`. Each module here has NAME, HELP, add_arguments(parser) and
handle(command, options); add a module and a line below to add a subcommand."""

from importlib import import_module

SUBCOMMANDS = [
    "servers.cli.import_",
    "servers.cli.export",
    "servers.cli.publish",
    "servers.cli.versions",
    "servers.cli.diff",
    "servers.cli.rollback",
    "integrations.cli.import_openapi",
    "integrations.cli.import_postman",
    "integrations.cli.doctor",
]


def subcommands() -> list:
    return [import_module(path) for path in SUBCOMMANDS]
