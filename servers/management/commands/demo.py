import os
import shlex

from django.core.management.base import BaseCommand, CommandError, CommandParser

from servers.cli.demo_setup import endpoint_url, set_up_demo
from servers.definition import DefinitionError


class Command(BaseCommand):
    help = "First-run set-up: a demo user, the example servers and an API key (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", default="demo@getmcp.local")
        parser.add_argument(
            "--password-env",
            default="GETMCP_PASSWORD",
            metavar="VAR",
            help="environment variable with the demo user's password (default GETMCP_PASSWORD)",
        )

    def handle(self, *args, **options):
        try:
            demo = set_up_demo(options["email"], os.environ.get(options["password_env"]) or None)
        except DefinitionError as exc:
            for error in exc.errors:
                self.stderr.write(error)
            raise CommandError("the example servers could not be imported") from None
        out = self.stdout.write
        if demo.created_user:
            out(f"Created user {demo.user.email}")
        else:
            out(f"User {demo.user.email} already exists")
        if demo.password:
            out(f"Password (generated, shown once): {demo.password}")
        for server in demo.servers:
            out(f"Server {server.slug!r} ({server.auth_mode}): {endpoint_url(server.slug)}")
        for server, file_name in demo.kept:
            out(
                f"  {server.slug!r} already existed and was kept as it is; to reset it: "
                f".venv/bin/python manage.py server import examples/{file_name} "
                f"--owner {demo.user.email} --replace"
            )
        demo_server = demo.servers[0]
        url = endpoint_url(demo_server.slug)
        body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
        out("")
        out(f"API key for {demo_server.slug!r} (shown once): {demo.raw_key}")
        out("")
        out("Try it:")
        out(
            f"  curl -sS {shlex.quote(url)} -H 'Content-Type: application/json' "
            "-H 'Accept: application/json, text/event-stream' "
            f"-H {shlex.quote('Authorization: Bearer ' + demo.raw_key)} -d {shlex.quote(body)}"
        )
        out("")
        out("Add it to Claude Code:")
        out(
            f"  claude mcp add --transport http getmcp-demo {shlex.quote(url)} "
            f"--header {shlex.quote('Authorization: Bearer ' + demo.raw_key)}"
        )
