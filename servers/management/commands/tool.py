import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from servers.models import Server
from servers.snapshot import DefinitionError
from servers.testrun import UnknownTool, test_run_sync


class Command(BaseCommand):
    help = (
        "Work with one tool of a server. `tool test SLUG TOOL --args JSON` runs it once with "
        "the server's test secrets and prints the request, response, result and timing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
        sub.required = True
        test = sub.add_parser("test", help="Run a tool once with sample arguments.")
        test.add_argument("slug")
        test.add_argument("tool")
        # dest is not "args": Django's call_command takes that name for positional arguments.
        test.add_argument(
            "--args", dest="arguments", default="{}", help="the arguments, a JSON object"
        )
        test.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="NAME:VALUE",
            help="a client header, as an MCP client would send it (repeatable)",
        )

    def handle(self, *args, **options):
        try:
            arguments = json.loads(options["arguments"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--args is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise CommandError("--args must be a JSON object")
        headers = {}
        for item in options["header"]:
            name, sep, value = item.partition(":")
            if not sep or not name.strip():
                raise CommandError(f"--header {item!r}: expected NAME:VALUE")
            headers[name.strip().lower()] = value.strip()
        server = Server.objects.filter(slug=options["slug"]).first()
        if server is None:
            raise CommandError(f"No server with slug {options['slug']!r}")
        try:
            report = test_run_sync(server, options["tool"], arguments, client_headers=headers)
        except (UnknownTool, DefinitionError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        result = report.get("result") or {}
        if report.get("error") or result.get("isError"):
            raise CommandError("The tool call failed (see above).")
