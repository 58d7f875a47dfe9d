import json

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from accounts import policy
from accounts.models import User
from integrations.doctor.service import diagnose
from servers.cli.owners import authorize
from servers.cli.publish import find_server

NAME = "doctor"
HELP = (
    "Replay what claude.ai, ChatGPT, Cursor, VS Code and Claude Code do before their first call "
    "against the server's public URL, and check the deployment (https, reachability, CORS, SSE)."
)
MARKS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "skip"}


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("slug")
    parser.add_argument("--key", help="the API key a client sends (default: a temporary one)")
    parser.add_argument("--origin", help="the Origin a browser-based client sends")
    parser.add_argument(
        "--as", dest="as_email", metavar="EMAIL", help="act as this member (role checked)"
    )
    parser.add_argument(
        "--site-url",
        metavar="URL",
        help="where the site runs, if not at SITE_URL (e.g. http://127.0.0.1:9000 after "
        "`make run PORT=9000`; `make doctor PORT=9000` passes it as make run does)",
    )
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    parser.add_argument("--verbose", action="store_true", help="requests and responses too")


def handle(command, options) -> None:
    if options.get("site_url"):
        # This command's process only: every URL the doctor builds starts from SITE_URL.
        settings.SITE_URL = options["site_url"].rstrip("/")
    server = find_server(options["slug"])
    user = None
    if options.get("as_email"):
        user = User.objects.filter(email__iexact=options["as_email"].strip()).first()
        if user is None:
            raise CommandError(f"--as: no user with email {options['as_email']!r}")
        authorize(user, server.organization, policy.Action.SERVER_EDIT)
    report = diagnose(
        server=server, user=user, key=options.get("key"), origin=options.get("origin")
    )
    if options.get("json"):
        command.stdout.write(json.dumps(report.as_dict(), indent=2))
    else:
        _print(command, report, verbose=options.get("verbose"))
    if not report.healthy:
        raise CommandError(f"{report.counts['fail']} check(s) failed")


def _print(command, report, *, verbose: bool) -> None:
    command.stdout.write(f"Connector doctor for {report.url}")
    for family, steps in report.families():
        command.stdout.write(f"\n{family}")
        for step in steps:
            command.stdout.write(f"  {MARKS[step.status]}  {step.name}: {step.detail}")
            if step.fix:
                command.stdout.write(f"        fix: {step.fix}")
            if verbose and step.request:
                command.stdout.write("        > " + step.request.replace("\n", "\n        > "))
                command.stdout.write("        < " + step.response.replace("\n", "\n        < "))
    counts = report.counts
    command.stdout.write(
        f"\n{counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed, "
        f"{counts['skip']} skipped"
    )
