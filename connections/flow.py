"""The authorization code flow with PKCE, from the getmcp page a person opens to the stored
connection.

`begin` is called once the page has checked that the person signed in is the one the link was
made for; it keeps a `state` bound to that person, the organization, the provider and the
scopes (single use: read with GETDEL; expiring after CONNECT_STATE_SECONDS) and answers the
provider's authorization URL. `finish` takes the provider's redirect back: it checks the state
against the person signed in, exchanges the code (exchange.py) and stores the tokens.
"""

from typing import Any
from urllib.parse import urljoin

import orjson
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from django.conf import settings
from django.urls import reverse

from infra import keys
from infra.redis import sync_client

from . import exchange
from .models import Connection, Provider
from .storing import store_tokens

CONNECT_STATE_SECONDS = 600


class FlowRefused(Exception):
    """The flow cannot go on; the message is for the person in the browser."""


def redirect_uri() -> str:
    return urljoin(settings.SITE_URL.rstrip("/") + "/", reverse("connections:callback").lstrip("/"))


def begin(*, user_id: int, provider: Provider, scopes: list[str], elicitation_id: str = "") -> str:
    """The provider's authorization URL for this person, with a fresh single-use state."""
    state = generate_token(40)
    verifier = generate_token(64) if provider.pkce else ""
    wanted = sorted({*provider.scopes, *scopes})
    record = {
        "user": user_id,
        "organization": provider.organization_id,
        "provider": provider.pk,
        "scopes": wanted,
        "verifier": verifier,
        "elicitation": elicitation_id,
    }
    sync_client().set(keys.connect_state(state), orjson.dumps(record), ex=CONNECT_STATE_SECONDS)
    params: dict[str, Any] = dict(provider.extra_authorize_params or {})
    if verifier:
        params.update(
            code_challenge=create_s256_code_challenge(verifier), code_challenge_method="S256"
        )
    return str(
        prepare_grant_uri(
            provider.authorization_url,
            provider.client_id,
            "code",
            redirect_uri=redirect_uri(),
            scope=provider.scope_separator.join(wanted) if wanted else None,
            state=state,
            **params,
        )
    )


def take_state(state: str) -> dict[str, Any] | None:
    """The state's record, once: a second read (a replayed redirect) finds nothing."""
    if not state or len(state) > 200:
        return None
    raw = sync_client().getdel(keys.connect_state(state))
    return orjson.loads(raw) if raw else None


async def finish(*, user_id: int, record: dict[str, Any], code: str) -> Connection:
    """Exchange the code for the person the state was made for, and store the connection."""
    from asgiref.sync import sync_to_async

    if record["user"] != user_id:
        # The link was made for someone else: a phished link completes nobody's connection.
        raise FlowRefused(
            "This connection was started for another person. Sign in as that person, or ask "
            "your tool again to get a link of your own."
        )
    provider = await sync_to_async(Provider.objects.filter(pk=record["provider"]).first)()
    if provider is None or provider.organization_id != record["organization"]:
        raise FlowRefused("This provider is no longer configured in the organization.")
    try:
        tokens = await exchange.exchange_code(
            provider,
            code=code,
            redirect_uri=redirect_uri(),
            code_verifier=record["verifier"] or None,
        )
    except exchange.ProviderRefused as exc:
        raise FlowRefused(f"The provider refused the connection: {exc.message}.") from None
    granted = tokens.scopes or record["scopes"]
    return await sync_to_async(store_tokens)(
        provider=provider, user_id=user_id, tokens=tokens, scopes=granted
    )
