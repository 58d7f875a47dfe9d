"""Stage 2, resolve the caller: the credential the request authenticated with becomes one typed
`Caller` (mcp_protocol/caller.py), which every later stage and the tool itself read.

In: the `Credential` of stage 1, as this process holds it (credentials.py: loaded once, kept
until its generation moves). Out: a `Caller`. Nothing here reads Redis or the database: a warm
call resolves its caller from memory."""

from mcp_protocol.caller import ANONYMOUS, Caller

from .credentials import Credential


def resolve(credential: Credential) -> Caller:
    if credential.grant_id is not None:
        account = credential.service_account_id
        if account is not None:
            # Client credentials: the token acts as the service account, named like its keys.
            return Caller(
                organization_id=credential.organization_id,
                principal="service_account",
                principal_id=account,
                role=credential.role,
                credential_kind="oauth",
                credential_id=credential.grant_id,
                credential_name=credential.name,
                client=credential.client_name,
            )
        return Caller(
            organization_id=credential.organization_id,
            principal="person",  # a person's consent, or their identity provider's assertion
            principal_id=credential.user_id,
            role=credential.role,
            credential_kind="oauth",
            credential_id=credential.grant_id,
            client=credential.client_name,
        )
    if credential.key_id is not None:
        account = credential.service_account_id
        return Caller(
            organization_id=credential.organization_id,
            # A service account's key acts as the account; a personal key as its creator.
            principal="service_account" if account is not None else "person",
            principal_id=account if account is not None else credential.user_id,
            role=credential.role,
            credential_kind="api_key",
            credential_id=credential.key_id,
            credential_name=credential.name,
        )
    return ANONYMOUS
