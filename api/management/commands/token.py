import json
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.models import User
from api.models import PersonalAccessToken


class Command(BaseCommand):
    help = (
        "Create, list and revoke personal access tokens for the management API. "
        "The raw token is shown once, at creation."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", metavar="ACTION")
        sub.required = True
        create = sub.add_parser("create", help="issue a token and print it once")
        create.add_argument("--owner", required=True, help="email of the user it acts for")
        create.add_argument("--name", required=True)
        create.add_argument("--expires-days", type=int, metavar="N")
        create.add_argument("--json", action="store_true", help="print a JSON object")
        listing = sub.add_parser("list", help="the owner's tokens")
        listing.add_argument("--owner", required=True)
        revoke = sub.add_parser("revoke", help="revoke a token by its prefix")
        revoke.add_argument("prefix")
        revoke.add_argument("--owner", required=True)

    def handle(self, *args, **options):
        return getattr(self, f"_{options['action']}")(options)

    def _owner(self, email: str) -> User:
        user = User.objects.filter(email__iexact=email.strip()).first()
        if user is None:
            raise CommandError(f"--owner: no user with email {email!r}")
        return user

    def _create(self, options):
        user = self._owner(options["owner"])
        name = options["name"].strip()
        if not name or len(name) > 100:
            raise CommandError("--name: must be 1-100 characters")
        expires_at = None
        if options.get("expires_days") is not None:
            if options["expires_days"] < 1:
                raise CommandError("--expires-days: must be at least 1")
            expires_at = timezone.now() + timedelta(days=options["expires_days"])
        token, raw = PersonalAccessToken.issue(user, name, expires_at=expires_at)
        if options["json"]:
            payload = {
                "id": token.pk,
                "name": token.name,
                "prefix": token.prefix,
                "token": raw,
                "expires_at": expires_at.isoformat() if expires_at else None,
            }
            self.stdout.write(json.dumps(payload))
            return
        self.stdout.write(f"Created token {token.name!r} ({token.prefix}…) for {user.email}.")
        self.stdout.write("Copy it now, it is not shown again:")
        self.stdout.write(raw)

    def _list(self, options) -> None:
        user = self._owner(options["owner"])
        rows = [("PREFIX", "NAME", "CREATED", "LAST USED", "STATE")]
        for token in user.personal_access_tokens.all():
            state = "active" if token.is_active else ("revoked" if token.revoked_at else "expired")
            rows.append(
                (
                    token.prefix,
                    token.name,
                    token.created_at.strftime("%Y-%m-%d %H:%M"),
                    token.last_used_at.strftime("%Y-%m-%d %H:%M")
                    if token.last_used_at
                    else "never",
                    state,
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write(
                "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
            )

    def _revoke(self, options):
        user = self._owner(options["owner"])
        matches = list(user.personal_access_tokens.filter(prefix=options["prefix"]))
        if not matches:
            raise CommandError(f"no token with prefix {options['prefix']!r}")
        if len(matches) > 1:
            raise CommandError(f"{len(matches)} tokens share prefix {options['prefix']!r}")
        token = matches[0]
        if token.revoked_at is not None:
            self.stdout.write(f"Token {token.prefix}… was already revoked")
            return
        token.revoke()
        self.stdout.write(f"Revoked token {token.name!r} ({token.prefix}…)")
