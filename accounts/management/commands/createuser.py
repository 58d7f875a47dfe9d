import getpass
import os

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User


class Command(BaseCommand):
    help = "Create a user (email login) with their personal organization."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument(
            "--password-env",
            default="GETMCP_PASSWORD",
            metavar="VAR",
            help="environment variable holding the password (default GETMCP_PASSWORD); "
            "prompted for when unset",
        )

    def handle(self, *args, **options):
        email = User.objects.normalize_email(options["email"].strip()).lower()
        if "@" not in email:
            raise CommandError(f"{email!r} is not an email address")
        if User.objects.filter(email__iexact=email).exists():
            raise CommandError(f"a user with email {email} already exists")
        password = os.environ.get(options["password_env"]) or _prompt()
        try:
            validate_password(password, User(email=email))
        except ValidationError as exc:
            raise CommandError("password: " + " ".join(exc.messages)) from None
        user = User.objects.create_user(email, password)
        org = user.personal_organization()
        self.stdout.write(f"Created user {user.email} with organization {org.slug}")


def _prompt() -> str:
    first = getpass.getpass("Password: ")
    if first != getpass.getpass("Password (again): "):
        raise CommandError("the passwords do not match")
    if not first:
        raise CommandError("a password is required")
    return first
