"""Prints {"key": ..., "token": ...} for bench-echo-auth: an API key of its organization and an
OAuth access token (a day long) of its owner, issued the way the token endpoint issues them.
Run by bench/run.py with DJANGO_SETTINGS_MODULE and the benchmark's database."""

import json

import django

django.setup()

from accounts.models import ApiKey, User  # noqa: E402
from oauth.clients import client_register  # noqa: E402
from oauth.grants import grant_create  # noqa: E402
from oauth.metadata import resource_uri  # noqa: E402
from oauth.tokens import tokens_issue  # noqa: E402
from servers.models import Server  # noqa: E402

server = Server.objects.get(slug="bench-echo-auth")
owner = User.objects.get(email="bench@example.com")
# A personal key of the owner: a key acts as someone (a person or a service account).
_key, raw_key = ApiKey.issue(server.organization, "bench", created_by=owner)
client, _secret = client_register(
    metadata={"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "client_name": "bench"},
    source_ip=None,
)
grant = grant_create(
    user=owner, server=server, client=client, scope="mcp", resource=resource_uri(server.slug)
)
token = tokens_issue(grant=grant, client=client)["access_token"]
print(json.dumps({"key": raw_key, "token": token}))
