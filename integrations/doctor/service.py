"""The one entry point of the doctor, for the dashboard page and `manage.py server doctor`."""

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import ApiKey
from oauth.metadata import resource_uri
from servers.models import Server, accepts_api_key
from vault.masking import Masker

from . import deployment, header_clients, oauth_clients
from .probe import Probe, site_address
from .report import SKIP, Report, Step

TEMPORARY_MINUTES = 10


def diagnose(*, server: Server, user=None, key: str | None = None, origin: str | None = None):
    """Runs every check against SITE_URL/mcp/<slug>. `key` is the credential a client sends (to
    find out why it is refused); without one the doctor uses a key of its own, limited to this
    server and revoked at the end (for an OAuth-only server: a token of `user`'s)."""
    credential, cleanup = (key, None) if key else _temporary_credential(server, user)
    try:
        return async_to_sync(_run)(server, credential, key is not None, (origin or "").strip())
    finally:
        if cleanup is not None:
            cleanup()


async def _run(server: Server, credential, key_given: bool, origin: str) -> Report:
    url = resource_uri(server.slug)
    report = Report(slug=server.slug, url=url)
    masker = Masker([credential] if credential else [])
    site = await site_address(url)
    allow_private = settings.DOCTOR_ALLOW_PRIVATE_SITE
    deployment.check_https(report, url, site)
    if not deployment.check_reachability(report, site, allow_private=allow_private):
        report.add(Step(deployment.FAMILY, "the other checks", SKIP, "SITE_URL is not callable"))
        return report
    probe = Probe.for_site(site, allow_private=allow_private or site.local, masker=masker)
    if not await deployment.check_answers(report, probe, settings.SITE_URL):
        report.add(Step(deployment.FAMILY, "the other checks", SKIP, "nothing answers there"))
        return report
    await header_clients.run(report, probe, url, credential=credential, key_given=key_given)
    await oauth_clients.run(report, probe, url, auth_mode=server.auth_mode)
    await deployment.check_cors(report, probe, url, origin or None)
    await deployment.check_sse(report, probe, url, credential, settings.DOCTOR_SSE_WAIT_SECONDS)
    return report


def _temporary_credential(server: Server, user):
    if server.auth_mode == Server.AUTH_NONE:
        return None, None
    expires = timezone.now() + timedelta(minutes=TEMPORARY_MINUTES)
    if accepts_api_key(server.auth_mode):
        key, raw = ApiKey.issue(
            server.organization,
            "connector doctor (temporary)",
            servers=[server],
            expires_at=expires,
            created_by=user,
        )
        return raw, key.revoke
    if user is None:
        return None, None
    from oauth.clients import client_register
    from oauth.grants import grant_create, grant_revoke
    from oauth.tokens import tokens_issue

    with transaction.atomic():
        client, _ = client_register(
            metadata={
                "client_name": "getmcp connector doctor",
                "redirect_uris": [oauth_clients.CALLBACK],
                "token_endpoint_auth_method": "none",
            },
            source_ip=None,
        )
        grant = grant_create(
            user=user, server=server, client=client, scope="mcp", resource=resource_uri(server.slug)
        )
        token = tokens_issue(grant=grant, client=client)["access_token"]
    return token, lambda: grant_revoke(grant=grant, reason="connector doctor finished")
