import sys

from django.core.management.base import CommandError, CommandParser

from accounts.policy import Action
from servers.definition import DefinitionError, import_definition, load_file, load_text
from servers.destination_checks import definition_warnings
from servers.publishing import publish_import

from .owners import authorize, resolve_owner

NAME = "import"
HELP = "Create a server from a YAML/JSON definition file (or replace one with --replace)."


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("file", help="definition file, or - for standard input")
    parser.add_argument("--owner", required=True, help="email of the user importing it")
    parser.add_argument("--org", help="organization slug (default: the owner's personal one)")
    parser.add_argument(
        "--slug", help="import under this slug instead of the definition's own (e.g. a copy)"
    )
    parser.add_argument(
        "--replace", action="store_true", help="replace the definition of an existing server"
    )
    parser.add_argument(
        "--draft",
        action="store_true",
        help="only update the draft; by default the import is also published and served",
    )


def handle(command, options) -> None:
    user, org = resolve_owner(options["owner"], options.get("org"))
    authorize(user, org, Action.SERVER_SETTINGS if options["replace"] else Action.SERVER_CREATE)
    if not options["draft"]:
        authorize(user, org, Action.SERVER_PUBLISH)
    try:
        if options["file"] == "-":
            data = load_text(sys.stdin.read(), "<stdin>")
        else:
            data = load_file(options["file"])
        if options.get("slug") and isinstance(data, dict):
            data["slug"] = options["slug"]
        server = import_definition(data, org, replace=options["replace"], user=user)
        published = None if options["draft"] else publish_import(server, user=user)
    except DefinitionError as exc:
        for error in exc.errors:
            command.stderr.write(error)
            if error.startswith("slug: already taken"):
                command.stderr.write(
                    "  (slugs are unique across organizations and another one has this slug: "
                    "import under a slug of your own with --slug NEW-SLUG)"
                )
        count = len(exc.errors)
        raise CommandError(f"{count} error{'s' if count != 1 else ''}; nothing imported") from None
    counts = ", ".join(
        f"{getattr(server, related).count()} {label}"
        for related, label in [
            ("tools", "tools"),
            ("resources", "resources"),
            ("resource_templates", "resource templates"),
            ("prompts", "prompts"),
        ]
    )
    command.stdout.write(f"Imported server {server.slug!r} into {org.slug}: {counts}")
    if published is not None:
        command.stdout.write(f"Published version {published.version}")
    for warning in definition_warnings(data, org.pk):
        command.stdout.write(f"warning: {warning}")
