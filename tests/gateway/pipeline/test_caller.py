"""The caller is resolved once, in the pipeline, from the credential the process holds: the
person behind it, their role, the credential and the OAuth client, with no SQL and no Redis
round trip once the request's state is warm."""

import pytest

from accounts.models import ApiKey, Membership
from gateway.pipeline import admission
from gateway.pipeline.arrival import Arrival
from gateway.pipeline.caller import resolve
from gateway.pipeline.credentials import ANONYMOUS, Credential, digest, generation_digest
from gateway.pipeline.mirror import mirror
from infra.redis import async_client
from mcp_protocol.caller import ANONYMOUS as NO_CALLER
from mcp_protocol.caller import Caller
from tests.gateway.endpoint.test_hot_path import redis_commands_of_this_task
from tests.waiting import wait_until_async


def arrival(slug: str, raw: str) -> Arrival:
    return Arrival(
        surface="mcp",
        slug=slug,
        version=None,
        host="localhost",
        origin=None,
        authorization=f"Bearer {raw}",
        session_id=None,
        user_agent="test",
        client_ip="127.0.0.1",
    )


@pytest.fixture
def member_key(committed, tenant):
    """A key made by a member of the tenant's organization (role: member)."""

    def make():
        from accounts.models import User

        person = User.objects.create_user(f"member-{tenant.slug}@example.com", "long password 1")
        Membership.objects.create(user=person, organization=tenant.org, role="member")
        key, raw = ApiKey.issue(tenant.org, "member key", created_by=person)
        return key, raw, person

    return committed(make)


async def test_a_key_resolves_to_the_person_who_made_it_with_their_role(
    tenant, member_key, django_db_blocker
):
    key, raw, person = member_key
    with django_db_blocker.unblock():
        admitted = await admission.admit(async_client(), arrival(tenant.slug, raw))
    assert admitted.caller == Caller(
        organization_id=tenant.org.pk,
        principal="person",
        principal_id=person.pk,
        role="member",
        credential_kind="api_key",
        credential_id=key.pk,
        credential_name="member key",
    )
    assert admitted.caller.ident == f"key:{key.pk}"


async def test_a_warm_admission_resolves_its_caller_without_sql_or_redis(tenant, django_db_blocker):
    redis = async_client()
    with django_db_blocker.unblock():
        # Cold: the key from Postgres, then its generation from Redis; then it is known.
        for _ in range(2):
            first = await admission.admit(redis, arrival(tenant.slug, tenant.raw))
    key_digest = generation_digest(digest(tenant.raw))
    await wait_until_async(
        lambda: mirror().lookup(tenant.slug, key_digest, None) is not None,
        timeout=15,
        interval=0.01,
        what="the mirror to hold the server and the key",
    )
    # The database stays blocked (any query would raise), and no Redis command is sent.
    with redis_commands_of_this_task() as sent:
        warm = await admission.admit(redis, arrival(tenant.slug, tenant.raw))
    assert sent == []
    assert warm.caller == first.caller
    assert warm.caller.credential_kind == "api_key"
    assert warm.caller.organization_id == tenant.org.pk


def test_an_oauth_grant_resolves_to_its_person_and_client():
    credential = Credential(
        key_id=None,
        organization_id=5,
        name="",
        server_ids=frozenset(),
        expires_at=None,
        revoked=False,
        generation="1",
        grant_id=12,
        user_id=7,
        client_name="Claude",
        audience_server_id=3,
        role="admin",
    )
    assert resolve(credential) == Caller(5, "person", 7, "admin", "oauth", 12, client="Claude")


def test_no_credential_resolves_to_the_anonymous_caller():
    assert resolve(ANONYMOUS) is NO_CALLER


def test_a_service_accounts_key_resolves_to_the_account_not_its_maker():
    credential = Credential(
        key_id=4,
        organization_id=5,
        name="deploy",
        server_ids=frozenset(),
        expires_at=None,
        revoked=False,
        generation="1",
        service_account_id=9,
        role="member",
    )
    assert resolve(credential) == Caller(
        5, "service_account", 9, "member", "api_key", 4, credential_name="deploy"
    )


@pytest.fixture
def service_token(committed, unique):
    """An OAuth server and an access token issued by the client_credentials grant to a service
    account of its organization (oauth/service_clients.py), all committed."""

    def make():
        from accounts.models import User
        from accounts.service_accounts import service_account_create
        from oauth import metadata
        from oauth.service_clients import service_client_create, token_from_client_credentials
        from servers.definition import import_definition
        from tests.gateway.endpoint.conftest import server_definition

        owner = User.objects.create_user(f"sa-{unique}@example.com", "long enough password 1")
        org = owner.personal_organization()
        server = import_definition(server_definition(f"sa-{unique}", auth="oauth"), org)
        account = service_account_create(actor=owner, organization=org, name="CI", role="admin")
        client, _ = service_client_create(actor=owner, account=account, name="CI runner")
        body = token_from_client_credentials(
            client=client, resource=metadata.resource_uri(server.slug), scope=None
        )
        return server, account, body["access_token"]

    return committed(make)


async def test_a_client_credentials_token_resolves_to_the_service_account_warm(
    service_token, django_db_blocker
):
    server, account, raw = service_token
    redis = async_client()
    with django_db_blocker.unblock():
        for _ in range(2):
            first = await admission.admit(redis, arrival(server.slug, raw))
    await wait_until_async(
        lambda: mirror().lookup(server.slug, generation_digest(digest(raw)), None) is not None,
        timeout=15,
        interval=0.01,
        what="the mirror to hold the server and the token",
    )
    with redis_commands_of_this_task() as sent:
        warm = await admission.admit(redis, arrival(server.slug, raw))
    assert sent == []
    assert warm.caller == first.caller
    assert (warm.caller.principal, warm.caller.principal_id) == ("service_account", account.pk)
    assert (warm.caller.role, warm.caller.credential_kind) == ("admin", "oauth")
    assert (warm.caller.credential_name, warm.caller.client) == ("CI", "CI runner")
