"""Seeds the connected-accounts sides (issue 28) through the product's own services: a `bench`
provider in the organization of bench-connection (connections.providers.provider_create, as the
dashboard and API create one), the owner's connection to it with a token that does not expire
during the run (connections.storing.store_tokens, as the OAuth callback stores one: encrypted),
and an API key acting as that person (ApiKey.issue with created_by, as the dashboard issues a
member's key). Prints {"key": ...}.

    python bench/connection_seed.py UPSTREAM_URL CONNECTION_TOKEN

Run by bench/system_side.py with DJANGO_SETTINGS_MODULE and the benchmark's database."""

import json
import sys
import time

import django

django.setup()

from accounts.models import ApiKey, User  # noqa: E402
from connections.exchange import Tokens  # noqa: E402
from connections.providers import provider_create  # noqa: E402
from connections.storing import store_tokens  # noqa: E402
from servers.models import Server  # noqa: E402

# A day: far beyond a run, so no call refreshes (the refresh margin is at most 60 s).
LIFETIME_SECONDS = 86_400

upstream, access_token = sys.argv[1], sys.argv[2]
server = Server.objects.get(slug="bench-connection")
owner = User.objects.get(email="bench@example.com")
provider = provider_create(
    actor=owner,
    organization=server.organization,
    key="bench",
    name="Bench",
    authorization_url=f"{upstream}/authorize",
    token_url=f"{upstream}/token",
    client_id="bench",
    client_secret="bench-secret",
)
store_tokens(
    provider=provider,
    user_id=owner.pk,
    tokens=Tokens(
        access_token=access_token,
        refresh_token="bench-refresh",
        token_type="Bearer",
        scopes=["read"],
        expires_at=time.time() + LIFETIME_SECONDS,
    ),
    scopes=["read"],
)
_key, raw_key = ApiKey.issue(server.organization, "bench-person", created_by=owner)
print(json.dumps({"key": raw_key}))
