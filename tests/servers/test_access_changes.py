"""A change of role or membership never widens what a person's keys and grants reach
(servers/access.py, servers/access_changes.py, gateway/endpoint/auth.py), proven live: a real
server on loopback, the person's API key and OAuth grant, and the owner demoting, removing and
deleting them between calls. After every change, nothing answers that did not answer before it.
"""

from types import SimpleNamespace

import httpx2
import pytest

from accounts import service_accounts
from accounts.models import ApiKey, Membership, User
from oauth.models import Client as OAuthClient
from oauth.models import Grant
from oauth.tokens import tokens_issue
from servers.access import compile_role_access
from servers.definition import import_definition
from tests.gateway.endpoint.conftest import server_definition

SECRET_TOOL = "admin_report"
TOOLS = [
    *server_definition("x")["tools"],
    {
        "name": SECRET_TOOL,
        "description": "Admins only.",
        "inputSchema": {"type": "object"},
        "kind": "static",
        "config": {"content": [{"type": "text", "text": "payroll"}]},
    },
]


@pytest.fixture
def person(committed, unique):
    """A member limited by `roleAccess` to `echo`, with their own key and OAuth grant."""

    def make():
        owner = User.objects.create_user(f"own-{unique}@example.com", "long enough password 1")
        org = owner.personal_organization()
        member = User.objects.create_user(f"mem-{unique}@example.com", "long enough password 1")
        Membership.objects.create(organization=org, user=member, role=Membership.MEMBER)
        server = import_definition(
            server_definition(f"widen-{unique}", auth="api_key+oauth", tools=TOOLS), org
        )
        server.role_access = {"member": {"tools": ["echo"]}}
        server.save()
        _, key = ApiKey.issue(org, "member's", created_by=member)
        app = OAuthClient.objects.create(
            client_id=f"https://app-{unique}.example/client.json",
            client_name="App",
            redirect_uris=["https://app.example/cb"],
        )
        grant = Grant.objects.create(
            user=member,
            organization=org,
            server=server,
            client=app,
            scope="mcp",
            resource=f"http://localhost/mcp/{server.slug}",
        )
        token = tokens_issue(grant=grant, client=app)["access_token"]
        return SimpleNamespace(org=org, member=member, server=server, key=key, token=token)

    return committed(make)


def reach(url: str, credential: str) -> dict[str, int]:
    """The HTTP status of a call to each tool over REST, with this credential."""
    headers = {"authorization": f"Bearer {credential}"}
    with httpx2.Client(timeout=30, headers=headers) as http:
        return {
            tool: http.post(f"{url}/tools/{tool}", json={"message": "hi"}).status_code
            for tool in ("echo", SECRET_TOOL)
        }


def test_demotion_and_removal_never_widen_a_members_key_or_grant(asgi_server, person, committed):
    url = asgi_server.mcp_url(person.server.slug)
    before = {
        name: reach(url, cred) for name, cred in (("key", person.key), ("grant", person.token))
    }
    assert before == {
        "key": {"echo": 200, SECRET_TOOL: 404},
        "grant": {"echo": 200, SECRET_TOOL: 404},
    }

    def demote():
        # Through the model, as the dashboard and the API change roles (signals fire).
        membership = Membership.objects.get(organization=person.org, user=person.member)
        membership.role = Membership.VIEWER
        membership.save()

    committed(demote)
    # Viewers may not hold keys: the key is suspended (403, as every unusable key: no OAuth
    # challenge for a key). The grant keeps no more than a member's.
    assert reach(url, person.key) == {"echo": 403, SECRET_TOOL: 403}
    assert reach(url, person.token) == {"echo": 200, SECRET_TOOL: 404}

    committed(lambda: Membership.objects.get(organization=person.org, user=person.member).delete())
    assert reach(url, person.key) == {"echo": 403, SECRET_TOOL: 403}
    assert reach(url, person.token) == {"echo": 401, SECRET_TOOL: 401}


def test_a_suspended_key_says_why_and_works_again_when_its_person_is_back(
    asgi_server, person, committed
):
    url = asgi_server.mcp_url(person.server.slug)
    committed(lambda: Membership.objects.get(organization=person.org, user=person.member).delete())
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {person.key}"}) as http:
        refused = http.post(f"{url}/tools/echo", json={"message": "hi"})
    assert refused.status_code == 403
    assert "suspended" in refused.text
    assert "no longer a member" in refused.text

    committed(
        lambda: Membership.objects.create(
            organization=person.org, user=person.member, role=Membership.MEMBER
        )
    )
    assert reach(url, person.key) == {"echo": 200, SECRET_TOOL: 404}


def test_a_deleted_persons_keys_are_revoked_not_left_without_a_creator(
    asgi_server, person, committed
):
    url = asgi_server.mcp_url(person.server.slug)
    assert reach(url, person.key)["echo"] == 200
    committed(lambda: User.objects.filter(pk=person.member.pk).delete())
    assert reach(url, person.key) == {"echo": 403, SECRET_TOOL: 403}
    revoked = committed(
        lambda: ApiKey.objects.get(name="member's", organization=person.org).revoked_at
    )
    assert revoked is not None


def test_a_key_with_no_known_creator_is_no_wider_than_a_members(asgi_server, person, committed):
    url = asgi_server.mcp_url(person.server.slug)
    _, legacy = committed(lambda: ApiKey.issue(person.org, "from before keys had creators"))
    assert reach(url, legacy) == {"echo": 200, SECRET_TOOL: 404}


# -- roleAccess means "no more than" -----------------------------------------------------------


def test_a_role_left_out_is_no_wider_than_the_nearest_named_role_above_it():
    compiled = compile_role_access({"member": {"tools": ["echo"]}})
    assert compiled["viewer"].tools == frozenset({"echo"})
    assert compiled["member"].tools == frozenset({"echo"})
    assert "admin" not in compiled and "owner" not in compiled


def test_a_lower_role_named_wider_than_a_higher_one_gets_only_what_both_allow():
    compiled = compile_role_access(
        {"admin": {"tools": ["echo", "report"]}, "viewer": {"tools": ["report", "delete_all"]}}
    )
    assert compiled["admin"].tools == frozenset({"echo", "report"})
    assert compiled["member"].tools == frozenset({"echo", "report"})
    assert compiled["viewer"].tools == frozenset({"report"})
    assert "owner" not in compiled


def test_a_server_that_limits_no_role_compiles_to_no_limit():
    assert dict(compile_role_access({})) == {}


def test_a_service_accounts_key_follows_the_accounts_role_and_is_refused_while_it_is_disabled(
    asgi_server, person, committed
):
    owner = person.org.billing_owner

    def make():
        account = service_accounts.service_account_create(
            actor=owner, organization=person.org, name="CI"
        )
        _, raw = service_accounts.service_account_key_issue(
            actor=owner, account=account, name="deploy"
        )
        return account, raw

    account, raw = committed(make)
    url = asgi_server.mcp_url(person.server.slug)
    # A member service account: held to what roleAccess gives members.
    assert reach(url, raw) == {"echo": 200, SECRET_TOOL: 404}

    committed(
        lambda: service_accounts.service_account_update(actor=owner, account=account, role="admin")
    )
    assert reach(url, raw) == {"echo": 200, SECRET_TOOL: 200}

    committed(
        lambda: service_accounts.service_account_update(actor=owner, account=account, role="member")
    )
    assert reach(url, raw) == {"echo": 200, SECRET_TOOL: 404}

    committed(
        lambda: service_accounts.service_account_set_disabled(
            actor=owner, account=account, disabled=True
        )
    )
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {raw}"}) as http:
        refused = http.post(f"{url}/tools/echo", json={"message": "hi"})
    assert refused.status_code == 403
    assert "service account (CI) is disabled" in refused.text

    committed(
        lambda: service_accounts.service_account_set_disabled(
            actor=owner, account=account, disabled=False
        )
    )
    assert reach(url, raw) == {"echo": 200, SECRET_TOOL: 404}


def test_a_key_moved_to_a_service_account_keeps_working_after_its_creator_leaves(
    asgi_server, person, committed
):
    owner = person.org.billing_owner
    url = asgi_server.mcp_url(person.server.slug)

    def move():
        account = service_accounts.service_account_create(
            actor=owner, organization=person.org, name="Kept"
        )
        key = ApiKey.objects.get(organization=person.org, created_by=person.member)
        service_accounts.key_transfer(actor=owner, key=key, account=account)

    committed(move)
    committed(lambda: Membership.objects.get(organization=person.org, user=person.member).delete())
    # The key acts as the service account (a member), not as the person who left.
    assert reach(url, person.key) == {"echo": 200, SECRET_TOOL: 404}
    assert reach(url, person.token) == {"echo": 401, SECRET_TOOL: 401}
