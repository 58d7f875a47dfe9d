import getpass
import os
import sys

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User


class Command(BaseCommand):
    help = "Create a user (email login) with their personal organization."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")
        parser.add_argument(
            "--password-env",
            default="GETMCP_PASSWORD",
            metavar="VAR",
            help="environment variable holding the password (default GETMCP_PASSWORD); "
            "prompted for when unset",
        )
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input (for scripts)",
        )

    def handle(self, *args, **options):
        email = User.objects.normalize_email(options["email"].strip()).lower()
        if "@" not in email:
            raise CommandError(f"{email!r} is not an email address")
        if User.objects.filter(email__iexact=email).exists():
            raise CommandError(f"a user with email {email} already exists")
        password = _password(options)
        try:
            validate_password(password, User(email=email))
        except ValidationError as exc:
            raise CommandError("password: " + " ".join(exc.messages)) from None
        user = User.objects.create_user(email, password)
        org = user.personal_organization()
        self.stdout.write(f"Created user {user.email} with organization {org.slug}")


def _password(options) -> str:
    if options["password_stdin"]:
        password = sys.stdin.readline().rstrip("\r\n")
        if not password:
            raise CommandError("--password-stdin: standard input held no password")
        return password
    from_env = os.environ.get(options["password_env"])
    if from_env:
        return from_env
    if not sys.stdin.isatty():
        raise CommandError(
            f"no terminal to ask for a password: set {options['password_env']} or pass "
            "--password-stdin and write the password to standard input"
        )
    return _prompt()


def _prompt() -> str:
    try:
        first = getpass.getpass("Password: ")
        again = getpass.getpass("Password (again): ")
    except EOFError:
        raise CommandError("no password given (input ended)") from None
    if first != again:
        raise CommandError("the passwords do not match")
    if not first:
        raise CommandError("a password is required")
    return first
