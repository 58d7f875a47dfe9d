import json
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.models import ApiKey
from accounts.policy import Action
from servers.cli.owners import authorize, resolve_owner


def key_state(key: ApiKey) -> str:
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= timezone.now():
        return "expired"
    return "active"


class Command(BaseCommand):
    help = "Create, list and revoke API keys. The raw key is shown once, at creation."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", metavar="ACTION")
        sub.required = True
        create = sub.add_parser("create", help="issue a key and print it once")
        create.add_argument("--owner", required=True, help="email of the user issuing it")
        create.add_argument("--name", required=True)
        create.add_argument("--org", help="organization slug (default: the owner's personal one)")
        create.add_argument(
            "--server",
            dest="servers",
            nargs="+",
            action="extend",
            default=[],
            metavar="SLUG",
            help="limit the key to these servers (default: every server of the organization)",
        )
        create.add_argument("--expires-days", type=int, metavar="N")
        create.add_argument("--json", action="store_true", help="print a JSON object")
        listing = sub.add_parser("list", help="the keys of the owner's organizations")
        listing.add_argument("--owner", required=True)
        listing.add_argument("--org")
        revoke = sub.add_parser("revoke", help="revoke a key by its prefix")
        revoke.add_argument("prefix")
        revoke.add_argument("--owner", required=True)

    def handle(self, *args, **options):
        return getattr(self, f"_{options['action']}")(options)

    def _create(self, options):
        user, org = resolve_owner(options["owner"], options.get("org"))
        authorize(user, org, Action.KEY_CREATE)
        servers = []
        for slug in dict.fromkeys(options["servers"]):
            server = org.servers.filter(slug=slug).first()
            if server is None:
                raise CommandError(f"--server: {org.slug} has no server {slug!r}")
            servers.append(server)
        expires_at = None
        if options.get("expires_days") is not None:
            if options["expires_days"] < 1:
                raise CommandError("--expires-days: must be at least 1")
            expires_at = timezone.now() + timedelta(days=options["expires_days"])
        name = options["name"].strip()
        if not name or len(name) > 100:
            raise CommandError("--name: must be 1-100 characters")
        key, raw = ApiKey.issue(org, name, servers, expires_at=expires_at, created_by=user)
        if options["json"]:
            payload = {
                "id": key.pk,
                "name": key.name,
                "prefix": key.prefix,
                "key": raw,
                "servers": [s.slug for s in servers],
                "expires_at": expires_at.isoformat() if expires_at else None,
            }
            self.stdout.write(json.dumps(payload))
            return
        scope = ", ".join(s.slug for s in servers) or f"every server of {org.slug}"
        self.stdout.write(f"Created key {key.name!r} ({key.prefix}…) for {scope}.")
        self.stdout.write("Copy it now, it is not shown again:")
        self.stdout.write(raw)

    def _list(self, options) -> None:
        user, _ = resolve_owner(options["owner"], options.get("org"))
        orgs = user.organizations()
        if options.get("org"):
            orgs = orgs.filter(slug=options["org"])
        keys = ApiKey.objects.filter(organization__in=orgs).select_related("organization")
        rows = [("PREFIX", "NAME", "ORG", "CREATED", "LAST USED", "STATE")]
        for key in keys.order_by("-created_at", "-id"):
            rows.append(
                (
                    key.prefix,
                    key.name,
                    key.organization.slug,
                    key.created_at.strftime("%Y-%m-%d %H:%M"),
                    key.last_used_at.strftime("%Y-%m-%d %H:%M") if key.last_used_at else "never",
                    key_state(key),
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write(
                "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            )

    def _revoke(self, options):
        user, _ = resolve_owner(options["owner"])
        matches = list(
            ApiKey.objects.filter(organization__in=user.organizations(), prefix=options["prefix"])
        )
        if not matches:
            raise CommandError(f"no key with prefix {options['prefix']!r}")
        if len(matches) > 1:
            raise CommandError(f"{len(matches)} keys share prefix {options['prefix']!r}")
        key = matches[0]
        authorize(user, key.organization, Action.KEY_MANAGE, obj=key)
        if key.revoked_at is not None:
            self.stdout.write(f"Key {key.prefix}… was already revoked")
            return
        key.revoke()
        self.stdout.write(f"Revoked key {key.name!r} ({key.prefix}…)")
