"""First-run set-up behind `manage.py demo` (not a `server` subcommand): a demo user, the example
servers and a fresh key, idempotently. Example servers that already exist are kept as they are,
so running it again (every `make run`) never undoes edits made to them."""

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from accounts.models import ApiKey, User
from servers.definition import import_definition, load_file
from servers.models import Server
from servers.publishing import publish_import

EXAMPLES = Path(settings.BASE_DIR) / "examples"
DEMO_FILES = ["demo.yaml", "conformance.yaml"]


@dataclass
class DemoSetup:
    user: User
    created_user: bool
    password: str | None  # only when generated here; never read back from the database
    servers: list
    kept: list  # (server, example file name) of those that already existed, left as they were
    key: ApiKey
    raw_key: str


def set_up_demo(email: str, password: str | None = None) -> DemoSetup:
    generated = None
    with transaction.atomic():
        user = User.objects.filter(email__iexact=email).first()
        created = user is None
        if created:
            if password is None:
                password = generated = secrets.token_urlsafe(12)
            user = User.objects.create_user(email, password)
        elif password is not None:
            user.set_password(password)
            user.save(update_fields=["password"])
        org = user.personal_organization()
        servers, kept = [], []
        for name in DEMO_FILES:
            data = load_file(EXAMPLES / name)
            server = Server.objects.filter(slug=data.get("slug"), organization=org).first()
            if server is None:
                server = import_definition(data, org, user=user)
                publish_import(server, user=user)
            else:
                # Edits made since (in the dashboard, the API or by import) stay as they are.
                kept.append((server, name))
            servers.append(server)
        key, raw = ApiKey.issue(org, "demo key", [servers[0]], created_by=user)
    return DemoSetup(user, created, generated, servers, kept, key, raw)


def endpoint_url(slug: str) -> str:
    return f"{settings.SITE_URL.rstrip('/')}/mcp/{slug}"
