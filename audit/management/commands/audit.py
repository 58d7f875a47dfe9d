"""`manage.py audit verify [--org SLUG]`: check the audit hash chains; `audit purge`: apply
the retention now."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import Organization
from audit import chain, retention


class Command(BaseCommand):
    help = "Verify the audit trail's hash chains (verify) or apply its retention (purge)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="command", required=True)
        verify = sub.add_parser("verify", help="Report the first broken row of each chain.")
        verify.add_argument("--org", help="Only this organization's chain (its slug).")
        purge = sub.add_parser("purge", help="Delete rows older than the retention.")
        purge.add_argument("--days", type=int, default=None)

    def handle(self, *args, **options):
        if options["command"] == "purge":
            deleted = retention.purge(options["days"])
            self.stdout.write(f"Purged {deleted} audit row(s).")
            return
        if options.get("org"):
            org = Organization.objects.filter(slug=options["org"]).first()
            if org is None:
                raise CommandError(f"No organization {options['org']!r}.")
            ids = [org.pk]
        else:
            ids = chain.chains()
        broken = []
        for organization_id in ids:
            checked, bad = chain.verify(organization_id)
            name = (
                "no organization" if organization_id is None else f"organization {organization_id}"
            )
            if bad is None:
                self.stdout.write(f"{name}: {checked} row(s), chain intact")
            else:
                broken.append(bad)
                self.stdout.write(f"{name}: BROKEN at row {bad.row_id}: {bad.reason}")
        if broken:
            raise CommandError(
                f"{len(broken)} audit chain(s) broken; first at row {broken[0].row_id}"
            )
