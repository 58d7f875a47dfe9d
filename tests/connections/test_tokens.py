"""A call's token without a browser: the state is single use and bound to its person, a token
near expiry is refreshed once under the lock, a refused refresh asks for consent again, a
service account is told the tool acts as a person, and a tool without a connection runs no
query for one."""

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Membership, ServiceAccount, User
from connections import exchange, flow, tokens
from connections.models import Connection, Provider
from connections.requirement import Requirement
from mcp_protocol.caller import Caller
from vault.crypto import encrypt

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _close_worker_connections():
    """The calls' queries run in asgiref's worker thread; its connection is closed there, so the
    test database can be dropped at the end."""
    yield
    from asgiref.sync import sync_to_async
    from django.db import connections

    asyncio.run(sync_to_async(connections.close_all)())


@pytest.fixture
def provider(org):
    return Provider.objects.create(
        organization=org,
        key="corp",
        name="Corp",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="cid",
        scopes=["openid"],
    )


def person(user, org) -> Caller:
    return Caller(org.pk, "person", user.pk, "owner", "api_key", 1)


def connection(provider, user, *, expires_in: float, refresh: str = "r1") -> Connection:
    now = timezone.now()
    return Connection.objects.create(
        provider=provider,
        organization=provider.organization,
        user=user,
        access_token_ciphertext=encrypt("a1"),
        refresh_token_ciphertext=encrypt(refresh) if refresh else "",
        scopes=["openid"],
        expires_at=now + timedelta(seconds=expires_in),
        refreshed_at=now - timedelta(seconds=600),
    )


def test_a_state_is_read_once_and_names_its_person(user, provider):
    url = flow.begin(user_id=user.pk, provider=provider, scopes=["email"])
    assert "code_challenge_method=S256" in url and "scope=email+openid" in url
    state = url.split("state=")[1].split("&")[0]
    record = flow.take_state(state)
    assert record["user"] == user.pk and record["scopes"] == ["email", "openid"]
    assert flow.take_state(state) is None  # single use


def test_a_state_made_for_one_person_completes_nothing_for_another(user, outsider, provider):
    url = flow.begin(user_id=user.pk, provider=provider, scopes=[])
    record = flow.take_state(url.split("state=")[1].split("&")[0])
    with pytest.raises(flow.FlowRefused, match="another person"):
        asyncio.run(flow.finish(user_id=outsider.pk, record=record, code="c"))


def test_a_token_near_expiry_is_refreshed_once_by_concurrent_calls(
    user, org, provider, monkeypatch
):
    connection(provider, user, expires_in=5)
    refreshes = []

    async def provider_refresh(p, *, refresh_token):
        refreshes.append(refresh_token)
        await asyncio.sleep(0.2)  # a slow provider: the other calls wait on the lock meanwhile
        return exchange.Tokens("a2", "r2", "Bearer", ["openid"], timezone.now().timestamp() + 3600)

    monkeypatch.setattr(exchange, "refresh", provider_refresh)
    requirement = Requirement("corp")

    async def calls():
        return await asyncio.gather(
            *(
                tokens.token_for(
                    caller=person(user, org), organization_id=org.pk, requirement=requirement
                )
                for _ in range(5)
            )
        )

    got = asyncio.run(calls())
    assert {t.value for t in got} == {"a2"}
    assert refreshes == ["r1"]
    stored = Connection.objects.get(provider=provider, user=user)
    assert stored.refresh_token() == "r2"  # the rotated refresh token, stored with its token


def test_a_refused_refresh_asks_for_consent_again(user, org, provider, monkeypatch):
    connection(provider, user, expires_in=1)

    async def revoked(p, *, refresh_token):
        raise exchange.ProviderRefused("Corp answered 400", "invalid_grant")

    monkeypatch.setattr(exchange, "refresh", revoked)
    with pytest.raises(tokens.ConnectionNeeded):
        asyncio.run(
            tokens.token_for(
                caller=person(user, org),
                organization_id=org.pk,
                requirement=Requirement("corp"),
            )
        )
    assert Connection.objects.get(provider=provider, user=user).status == Connection.NEEDS_CONSENT


def test_a_service_account_is_told_a_per_person_tool_needs_a_person(org, provider, user):
    bot = ServiceAccount.objects.create(organization=org, name="bot", created_by=user)
    caller = Caller(org.pk, "service_account", bot.pk, "member", "api_key", 2)
    with pytest.raises(tokens.ConnectionUnavailable, match="service account"):
        asyncio.run(
            tokens.token_for(caller=caller, organization_id=org.pk, requirement=Requirement("corp"))
        )


def test_too_few_scopes_ask_for_more(user, org, provider):
    connection(provider, user, expires_in=3600)
    with pytest.raises(tokens.ConnectionNeeded) as need:
        asyncio.run(
            tokens.token_for(
                caller=person(user, org),
                organization_id=org.pk,
                requirement=Requirement("corp", ("repo",)),
            )
        )
    assert need.value.reason == "missing scopes repo"
    assert need.value.scopes == ["openid", "repo"]


def test_a_member_who_leaves_loses_their_connections_in_that_organization_only(user, org, provider):
    from accounts import services

    member = User.objects.create_user("leaving@example.com", "long enough password 4")
    membership = Membership.objects.create(user=member, organization=org, role=Membership.MEMBER)
    connection(provider, member, expires_in=3600, refresh="")
    elsewhere = member.personal_organization()
    other = Provider.objects.create(
        organization=elsewhere,
        key="corp",
        name="Corp",
        authorization_url="https://as.example/authorize",
        token_url="https://as.example/token",
        client_id="cid",
    )
    connection(other, member, expires_in=3600, refresh="")
    services.membership_remove(actor=member, membership=membership)
    assert list(Connection.objects.filter(user=member).values_list("organization", flat=True)) == [
        elsewhere.pk
    ]


def test_a_kept_token_is_refreshed_under_the_lock_once_its_refresh_time_comes(
    user, org, provider, monkeypatch
):
    import time as clock

    connection(provider, user, expires_in=3600)  # due for a refresh 60 s before it expires
    refreshes = []

    async def provider_refresh(p, *, refresh_token):
        refreshes.append(refresh_token)
        return exchange.Tokens("a2", "r2", "Bearer", ["openid"], clock.time() + 7200)

    monkeypatch.setattr(exchange, "refresh", provider_refresh)

    def call():
        return asyncio.run(
            tokens.token_for(
                caller=person(user, org), organization_id=org.pk, requirement=Requirement("corp")
            )
        ).value

    assert call() == "a1"
    assert call() == "a1" and refreshes == []  # kept, and far from expiry
    started = clock.time()
    monkeypatch.setattr(tokens.time, "time", lambda: started + 3550)
    assert call() == "a2"
    assert refreshes == ["r1"]
