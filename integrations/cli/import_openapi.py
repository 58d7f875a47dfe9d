"""`manage.py server import-openapi FILE|URL --server SLUG --owner EMAIL [--select ...]
[--preview|--dry-run] [--remove-missing]`"""

import sys
from pathlib import Path

import orjson
from django.core.management.base import CommandError, CommandParser

from accounts.policy import Action
from integrations.importers import ImportFailed, apply_import, parse_openapi, plan_import
from integrations.importers.sources import is_url
from servers.cli.owners import authorize, resolve_owner
from servers.destination_checks import tool_warnings
from servers.models import Server

NAME = "import-openapi"
HELP = "Preview or import the operations of an OpenAPI 3.0/3.1 or Swagger 2.0 document as draft http tools."


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument("source", help="a file, an http(s) URL, or - for standard input")
    parser.add_argument("--server", required=True, help="slug of the server that gets the tools")
    parser.add_argument(
        "--owner", required=True, help="email of a member of the server's organization"
    )
    parser.add_argument(
        "--select", help="comma-separated tool names or operationIds to import (default: all)"
    )
    parser.add_argument(
        "--preview",
        "--dry-run",
        action="store_true",
        help="show what would be imported (added, changed, removed), and import nothing",
    )
    parser.add_argument(
        "--remove-missing",
        action="store_true",
        help="delete the server's http tools on the document's base URL that match no "
        "operation (only when nothing is --select-ed)",
    )
    parser.add_argument("--json", action="store_true", help="print the preview as JSON")
    parser.add_argument(
        "--secret-prefix", help="first word of the secret names (default: the API title)"
    )


def add_arguments(parser: CommandParser) -> None:
    add_common_arguments(parser)
    parser.add_argument("--base-url", help="where relative server URLs of the document point")


def read_source(source: str):
    if source == "-":
        return sys.stdin.read()
    if is_url(source):
        return source
    return Path(source)


def find_server(user, slug: str) -> Server:
    # A server of an organization the user is not in reads as "not found", like a missing one.
    server = Server.objects.filter(slug=slug, organization__memberships__user=user).first()
    if server is None:
        raise CommandError(f"--server: {user.email} has no server {slug!r}")
    return server


def run(command, options, parse) -> None:
    """The shared body of import-openapi and import-postman: `parse(source, organization_id)`."""
    user, _org = resolve_owner(options["owner"])
    server = find_server(user, options["server"])
    if not options["preview"]:
        authorize(user, server.organization, Action.SERVER_EDIT)
    try:
        preview = parse(read_source(options["source"]), server.organization_id)
    except ImportFailed as exc:
        raise CommandError(str(exc)) from None
    selected = (
        [s.strip() for s in options["select"].split(",") if s.strip()]
        if options.get("select")
        else None
    )
    try:
        plan = plan_import(server, preview, selected)
    except ImportFailed as exc:
        raise CommandError(str(exc)) from None
    if options["json"]:
        data = {**preview.to_dict(), "changes": plan.to_dict()}
        command.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
    else:
        write_preview(command, preview, selected)
        write_plan(command, plan)
    if options["preview"]:
        return
    try:
        plan, tools = apply_import(
            server, preview, selected, remove_missing=options.get("remove_missing", False)
        )
    except ImportFailed as exc:
        raise CommandError(str(exc)) from None
    removed = len(plan.of("removed")) if options.get("remove_missing") else 0
    command.stdout.write(
        f"Imported into {server.slug}: {len(plan.of('added'))} added (disabled until reviewed), "
        f"{len(plan.of('changed'))} updated, {len(plan.of('unchanged'))} unchanged, "
        f"{removed} removed"
    )
    if preview.secrets:
        command.stdout.write(f"Secrets to set on the Secrets page: {', '.join(preview.secrets)}")
    server.refresh_from_db(fields=["http"])  # the import may have set its baseUrl
    for tool in tools:
        for warning in tool_warnings({"kind": tool.kind, "config": tool.config}, server):
            command.stdout.write(f"warning: {tool.name}: {warning}")


def write_preview(command, preview, selected=None) -> None:
    out = command.stdout
    out.write(
        f"{preview.title} {preview.version} ({preview.format}), base URL {preview.base_url or '-'}"
    )
    for problem in preview.problems:
        out.write(f"  ! {problem}")
    for op in preview.operations:
        chosen = selected is None or any(
            k in (op.name, op.operation_id, op.source) for k in selected
        )
        mark = "*" if chosen else " "
        arguments = ", ".join(f"{a.name}:{a.location}" for a in op.arguments) or "no arguments"
        out.write(f"{mark} {op.name:<40} {op.source}  [{arguments}]")
        for problem in op.problems:
            out.write(f"      ! {problem}")
    if preview.secrets:
        out.write(f"Secrets the tools use: {', '.join(preview.secrets)}")
    for provider in preview.providers:
        # The CLI imports tools only; an admin adds the provider (dashboard or API).
        out.write(
            f"Connection provider the tools use: {provider['key']} "
            f"({provider['authorizationUrl']}); an admin adds it under Connected accounts"
        )


def write_plan(command, plan) -> None:
    out = command.stdout
    out.write(f"On the server: {plan.summary()}")
    for change in plan.changes:
        if change.action == "added":
            out.write(f"  + {change.name:<40} {change.source}")
        elif change.action == "changed":
            out.write(f"  ~ {change.name:<40} {change.source}  ({', '.join(change.fields)})")
        elif change.action == "removed":
            out.write(f"  - {change.name:<40} (not in the document; --remove-missing deletes it)")


def handle(command, options) -> None:
    run(
        command,
        options,
        lambda source, organization_id: parse_openapi(
            source,
            base_url=options.get("base_url"),
            secret_prefix=options.get("secret_prefix"),
            organization_id=organization_id,
        ),
    )
