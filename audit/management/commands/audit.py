"""`manage.py audit verify [--org SLUG] [--checkpoint FILE]`: check the audit chains' MACs and
links, and their heads against the newest signed checkpoint (or FILE); `audit purge`: apply the
retention now; `audit checkpoint`: write a checkpoint now; `audit grants --app-role NAME
[--apply]`: the application role's rights in the two-role Postgres set-up (docs/audit.md)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from accounts.models import Organization
from audit import checkpoints, retention, roles, verification


class Command(BaseCommand):
    help = (
        "Verify the audit trail (verify), apply its retention (purge), write a checkpoint of its "
        "chain heads (checkpoint) or grant the application role its rights (grants)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="command", required=True)
        verify = sub.add_parser("verify", help="Report the first broken row of each chain.")
        verify.add_argument("--org", help="Only this organization's chain (its slug).")
        verify.add_argument(
            "--checkpoint",
            type=Path,
            help="Check against this checkpoint file (default: the newest in AUDIT_CHECKPOINT_DIR).",
        )
        purge = sub.add_parser("purge", help="Delete rows older than the retention.")
        purge.add_argument("--days", type=int, default=None)
        sub.add_parser("checkpoint", help="Write a signed checkpoint of every chain's head.")
        grants = sub.add_parser("grants", help="Grant the application role its rights.")
        grants.add_argument("--app-role", required=True)
        grants.add_argument("--apply", action="store_true", help="Run them (as the owner).")

    def handle(self, *args, **options):
        command = options["command"]
        if command == "purge":
            deleted = retention.purge(options["days"])
            self.stdout.write(f"Purged {deleted} audit row(s).")
        elif command == "checkpoint":
            path = checkpoints.export()
            self.stdout.write(f"Wrote {path}." if path else "AUDIT_CHECKPOINT_DIR is empty.")
        elif command == "grants":
            self._grants(options["app_role"], options["apply"])
        else:
            self._verify(options.get("org"), options.get("checkpoint"))

    def _grants(self, app_role: str, apply: bool) -> None:
        if connection.vendor != "postgresql":
            raise CommandError("The two-role set-up is for Postgres.")
        if not apply:
            self.stdout.write(";\n".join(roles.statements(app_role)) + ";")
            return
        try:
            done = roles.apply(app_role)
        except roles.UnsafeRole as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Applied {len(done)} statement(s) for {app_role}.")

    def _verify(self, slug: str | None, checkpoint: Path | None) -> None:
        ids: list[int | None] | None = None
        if slug:
            org = Organization.objects.filter(slug=slug).first()
            if org is None:
                raise CommandError(f"No organization {slug!r}.")
            ids = [org.pk]
        report = verification.verify(ids, checkpoint_file=checkpoint)
        for line in report.lines:
            self.stdout.write(line)
        for problem in report.problems:
            self.stdout.write(f"BROKEN: {problem}")
        if report.broken:
            raise CommandError(
                f"{len(report.broken)} audit chain(s) broken; first at row {report.broken[0].row_id}"
            )
        if report.problems:
            raise CommandError(report.problems[0])
