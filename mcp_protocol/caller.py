"""Who is calling: one typed value a request carries from its admission to the tool.

Resolved once per request by the gateway's pipeline (gateway/pipeline/caller.py) from the
credential the state mirror holds, then read by every later stage (narrowing, quotas, the call
log, tasks, the inspector) and by the tools themselves (`RequestContext.caller`); nothing after
the pipeline's caller stage works out identity from a key string again.

Pure data: no Django, no project import, so the tool kinds and the contexts may hold it.
"""

from dataclasses import dataclass
from typing import Literal

# Who stands behind a credential: a person (an OAuth grant's, a personal key's creator), or a
# service account (accounts.ServiceAccount: an organization's machine identity its keys and its
# client credentials' tokens act as).
PrincipalKind = Literal["person", "service_account", "anonymous"]
# How the caller proved it: an API key, an OAuth access token (its grant), or nothing at all
# (a server with `auth: none`).
CredentialKind = Literal["api_key", "oauth", "none"]


@dataclass(frozen=True, slots=True)
class Caller:
    organization_id: int | None
    principal: PrincipalKind
    # The person's user id, or the service account's id; None when unknown (a key made outside
    # every surface) or anonymous.
    principal_id: int | None
    # Their role in the organization (accounts/policy.py), "" when none applies.
    role: str
    credential_kind: CredentialKind
    # The API key's id, or the OAuth grant's (a refreshed token keeps its grant).
    credential_id: int | None
    # The API key's name as its owner wrote it; for a service account's OAuth token (client
    # credentials) the account's name; "" for other OAuth and anonymous callers.
    credential_name: str = ""
    # The OAuth client acting for the person, "" when the caller is not an OAuth client.
    client: str = ""

    @property
    def ident(self) -> str:
        """The stable name of the credential: what sessions, tasks, rate windows and kept
        results are bound to (per grant, not per token)."""
        if self.credential_kind == "oauth":
            return f"grant:{self.credential_id}"
        if self.credential_kind == "api_key":
            return f"key:{self.credential_id}"
        return "anon"

    @property
    def is_oauth(self) -> bool:
        return self.credential_kind == "oauth"

    @property
    def api_key_id(self) -> int | None:
        return self.credential_id if self.credential_kind == "api_key" else None

    @property
    def grant_id(self) -> int | None:
        return self.credential_id if self.credential_kind == "oauth" else None


ANONYMOUS = Caller(
    organization_id=None,
    principal="anonymous",
    principal_id=None,
    role="",
    credential_kind="none",
    credential_id=None,
)


def stored(organization_id: int | None, ident: str) -> Caller:
    """The caller a stored record names (a task row keeps the credential's ident and its
    organization): for work that runs after its request has gone, in a worker that never saw
    the request. The person and role are not kept with the record, so they are unknown here."""
    kind, _, number = ident.partition(":")
    if kind in ("key", "grant") and number.isdigit():
        return Caller(
            organization_id=organization_id,
            principal="person",
            principal_id=None,
            role="",
            credential_kind="api_key" if kind == "key" else "oauth",
            credential_id=int(number),
        )
    return ANONYMOUS
