"""The link a person is sent to connect with: a call run again before they connected (a
stateless retry carrying their answer, a task re-run after its input) shows the same link and
elicitation id it showed before, and only that person's call with the same needs gets it."""

import asyncio

import pytest

from connections import need
from connections.requirement import Requirement
from gateway.endpoint.stateless_context import StatelessContext
from mcp_protocol.errors import InputRequired, ToolError
from tests.connections import test_tokens

pytestmark = pytest.mark.django_db(transaction=True)

# The token tests' provider, and their closing of the worker thread's database connection.
provider = test_tokens.provider
_close_worker_connections = test_tokens._close_worker_connections
person = test_tokens.person

URL_ELICITATION = {"elicitation": {"url": {}}}


def context(user, org) -> StatelessContext:
    return StatelessContext(
        protocol_version="2026-07-28",
        client_capabilities=URL_ELICITATION,
        client_info=None,
        caller=person(user, org),
    )


def first_round(ctx, org, requirement) -> dict:
    with pytest.raises(InputRequired) as asked:
        asyncio.run(need.token_or_consent(ctx, organization_id=org.pk, requirement=requirement))
    ((key, question),) = asked.value.input_requests.items()
    assert key == "connect:corp"
    return question["params"]


def test_a_retry_before_connecting_names_the_link_the_client_was_shown(
    user, org, provider, monkeypatch
):
    requirement = Requirement(provider="corp", scopes=("openid",))
    shown = first_round(context(user, org), org, requirement)
    assert shown["elicitationId"] in shown["url"]

    # The person said yes but has not finished at the provider: the retry waits, then gives
    # up naming the same link.
    monkeypatch.setattr(need, "WAIT_SECONDS", 0.2)
    retry = context(user, org)
    retry.answers = {"connect:corp": {"action": "accept"}}
    with pytest.raises(ToolError) as gave_up:
        asyncio.run(need.token_or_consent(retry, organization_id=org.pk, requirement=requirement))
    assert shown["url"] in str(gave_up.value)

    # A third round asks again with the very same elicitation.
    assert first_round(context(user, org), org, requirement) == shown


def test_another_person_or_other_scopes_get_a_link_of_their_own(user, outsider, org, provider):
    from accounts.models import Membership

    Membership.objects.create(user=outsider, organization=org, role="member")
    requirement = Requirement(provider="corp", scopes=("openid",))
    mine = first_round(context(user, org), org, requirement)
    theirs = first_round(context(outsider, org), org, requirement)
    wider = first_round(
        context(user, org), org, Requirement(provider="corp", scopes=("openid", "email"))
    )
    assert len({mine["elicitationId"], theirs["elicitationId"], wider["elicitationId"]}) == 3


def test_a_link_close_to_expiry_is_not_shown_again(user, org, provider, monkeypatch):
    requirement = Requirement(provider="corp", scopes=("openid",))
    shown = first_round(context(user, org), org, requirement)
    monkeypatch.setattr(need, "REUSE_MIN_SECONDS", need.LINK_SECONDS)
    assert (
        first_round(context(user, org), org, requirement)["elicitationId"] != shown["elicitationId"]
    )
