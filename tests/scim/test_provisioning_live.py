"""SCIM provisioning against a real getmcp on loopback, as Okta's and Entra ID's SCIM
validators drive it (create, get by filter, replace, patch active=false, delete, groups), and
what deactivation ends: the person's API key, OAuth token and grant and an open SSE stream stop
within a second on TWO web processes sharing Postgres and Redis, and their dashboard session
no longer reaches the organization."""

import threading
import time
from types import SimpleNamespace

import httpx2
import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore

from accounts.models import ApiKey, Membership, User
from dashboard.scoping import SESSION_KEY as CURRENT_ORG
from oauth.models import Client as OAuthClient
from oauth.models import Grant
from oauth.tokens import tokens_issue
from scim import tokens
from scim.models import ScimUser
from servers.definition import import_definition
from tests.conftest import LiveServer
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.waiting import wait_until

SCIM = "application/scim+json"
USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


@pytest.fixture(scope="module")
def two_web_processes(live_database):
    # A long keep-alive: a stream that closes within a second was closed by the deprovisioning's
    # wake-up, not found dead at a keep-alive turn.
    slow_turns = {"MCP_SSE_KEEPALIVE_SECONDS": "30"}
    first = LiveServer(live_database, extra_env=slow_turns)
    second = LiveServer(live_database, extra_env=slow_turns)
    yield first, second
    first.stop()
    second.stop()


@pytest.fixture
def world(committed, unique):
    def make():
        owner = User.objects.create_user(f"owner-{unique}@example.com", "long enough password 1")
        org = owner.personal_organization()
        server = import_definition(server_definition(f"scim-{unique}", auth="api_key+oauth"), org)
        token = tokens.token_rotate(actor=owner, organization=org)
        tokens.settings_update(
            actor=owner, organization=org, default_role="member", group_roles={"Admins": "admin"}
        )
        return SimpleNamespace(owner=owner, org=org, server=server, token=token, unique=unique)

    return committed(make)


def scim_client(base: str, token: str) -> httpx2.Client:
    return httpx2.Client(
        base_url=f"{base}/scim/v2",
        timeout=30,
        headers={"authorization": f"Bearer {token}", "content-type": SCIM, "accept": SCIM},
    )


def credentials_for(committed, world, email: str):
    """The provisioned person's own API key, an OAuth grant with its access token, and a
    dashboard session (as a browser holds it: a cookie)."""

    def make():
        person = User.objects.get(email=email)
        _, key = ApiKey.issue(world.org, "person's", created_by=person)
        app = OAuthClient.objects.create(
            client_id=f"https://app-{world.unique}.example/client.json",
            client_name="App",
            redirect_uris=["https://app.example/cb"],
        )
        grant = Grant.objects.create(
            user=person,
            organization=world.org,
            server=world.server,
            client=app,
            scope="mcp",
            resource=f"http://localhost/mcp/{world.server.slug}",
        )
        access = tokens_issue(grant=grant, client=app)["access_token"]
        session = SessionStore()
        session[SESSION_KEY] = str(person.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = person.get_session_auth_hash()
        session[CURRENT_ORG] = world.org.pk
        session.create()
        return SimpleNamespace(key=key, token=access, grant=grant, cookie=session.session_key)

    return committed(make)


def echo(base: str, slug: str, credential: str) -> int:
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {credential}"}) as http:
        return http.post(f"{base}/mcp/{slug}/tools/echo", json={"message": "hi"}).status_code


def dashboard_status(base: str, slug: str, cookie: str) -> int:
    with httpx2.Client(
        timeout=30, cookies={settings.SESSION_COOKIE_NAME: cookie}, follow_redirects=False
    ) as http:
        return http.get(f"{base}/servers/{slug}/").status_code


class OpenStream:
    """An MCP session's GET SSE stream, read in a thread until the server ends it."""

    def __init__(self, url: str, credential: str) -> None:
        self.mcp = RawMcp(url, credential)
        self.mcp.initialize()
        self.opened = threading.Event()
        self.ended = threading.Event()
        self.status = 0
        self.clean = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.opened.wait(30), "the GET stream did not open"
        assert self.status == 200

    def _read(self) -> None:
        headers = self.mcp.headers(accept="text/event-stream")
        headers.pop("content-type")
        try:
            with (
                httpx2.Client(timeout=httpx2.Timeout(30, read=60)) as http,
                http.stream("GET", self.mcp.url, headers=headers) as response,
            ):
                self.status = response.status_code
                self.opened.set()
                for _chunk in response.iter_bytes():
                    pass
                self.clean = True  # the server ended the stream (a final empty chunk)
        except httpx2.HTTPError:
            self.clean = False
        finally:
            self.ended.set()

    def close(self) -> None:
        self.mcp.http.close()


class OpenListen:
    """A session-less 2026-07-28 `subscriptions/listen` stream, read in a thread until the
    server ends it (with the listen request's own answer, an error)."""

    def __init__(self, url: str, credential: str) -> None:
        params = {
            "notifications": {"toolsListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "scim-test", "version": "0.1"},
            },
        }
        self.body = {"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": params}
        self.headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "subscriptions/listen",
            "authorization": f"Bearer {credential}",
        }
        self.url = url
        self.text = ""
        self.opened = threading.Event()
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.opened.wait(30), "the listen stream did not open"

    def _read(self) -> None:
        try:
            with (
                httpx2.Client(timeout=httpx2.Timeout(30, read=60)) as http,
                http.stream("POST", self.url, json=self.body, headers=self.headers) as response,
            ):
                assert response.headers["content-type"].startswith("text/event-stream")
                for text in response.iter_text():
                    self.text += text
                    if "acknowledged" in self.text:
                        self.opened.set()
        except httpx2.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()


def test_okta_style_provisioning_and_deactivation_end_everything_on_two_processes(
    two_web_processes, world, committed
):
    first, second = two_web_processes
    email = f"jane-{world.unique}@example.com"
    with scim_client(first.url, world.token) as scim:
        # Okta's validator reads the discovery documents first.
        config = scim.get("/ServiceProviderConfig")
        assert config.status_code == 200
        assert config.headers["content-type"].startswith(SCIM)
        assert config.json()["patch"]["supported"] is True
        assert {t["id"] for t in scim.get("/ResourceTypes").json()["Resources"]} == {
            "User",
            "Group",
        }
        assert USER in {s["id"] for s in scim.get("/Schemas").json()["Resources"]}

        # Does the person exist? (Okta asks before every create.)
        lookup = scim.get("/Users", params={"filter": f'userName eq "{email}"'})
        assert lookup.status_code == 200
        assert lookup.json()["totalResults"] == 0
        created = scim.post(
            "/Users",
            json={
                "schemas": [USER],
                "userName": email,
                "name": {"givenName": "Jane", "familyName": "Doe"},
                "emails": [{"primary": True, "value": email, "type": "work"}],
                "displayName": "Jane Doe",
                "locale": "en-US",
                "externalId": "00u1okta",
                "groups": [],
                "active": True,
            },
        )
        assert created.status_code == 201, created.text
        person = created.json()
        uid = person["id"]
        assert created.headers["location"].endswith(f"/Users/{uid}")
        assert person["active"] is True and person["userName"] == email
        role = committed(
            lambda: Membership.objects.get(organization=world.org, user__email=email).role
        )
        assert role == "member"

        again = scim.post("/Users", json={"schemas": [USER], "userName": email.upper()})
        assert again.status_code == 409
        assert again.json()["scimType"] == "uniqueness"
        assert again.json()["schemas"] == ["urn:ietf:params:scim:api:messages:2.0:Error"]

        found = scim.get("/Users", params={"filter": f'userName eq "{email}"'}).json()
        assert found["totalResults"] == 1 and found["Resources"][0]["id"] == uid
        assert scim.get(f"/Users/{uid}").json()["name"]["givenName"] == "Jane"
        missing = scim.get("/Users/00000000-0000-0000-0000-000000000000")
        assert missing.status_code == 404 and missing.json()["status"] == "404"

        replaced = scim.put(
            f"/Users/{uid}",
            json={**person, "name": {"givenName": "Janet", "familyName": "Doe"}},
        )
        assert replaced.status_code == 200
        assert replaced.json()["name"]["givenName"] == "Janet"

        # Groups: the mapping makes members of "Admins" admins; leaving it takes that back.
        group = scim.post(
            "/Groups", json={"schemas": [GROUP], "displayName": "Admins", "members": []}
        )
        assert group.status_code == 201, group.text
        gid = group.json()["id"]
        by_name = scim.get("/Groups", params={"filter": 'displayName eq "Admins"'}).json()
        assert [g["id"] for g in by_name["Resources"]] == [gid]
        added = scim.patch(
            f"/Groups/{gid}",
            json={
                "schemas": [PATCH],
                "Operations": [{"op": "add", "path": "members", "value": [{"value": uid}]}],
            },
        )
        assert added.status_code == 200, added.text
        assert [m["value"] for m in added.json()["members"]] == [uid]
        role = committed(
            lambda: Membership.objects.get(organization=world.org, user__email=email).role
        )
        assert role == "admin"
        removed = scim.patch(
            f"/Groups/{gid}",
            json={
                "schemas": [PATCH],
                "Operations": [{"op": "remove", "path": f'members[value eq "{uid}"]'}],
            },
        )
        assert removed.status_code == 200 and removed.json()["members"] == []
        role = committed(
            lambda: Membership.objects.get(organization=world.org, user__email=email).role
        )
        assert role == "member"

        # The person works: key, token and a dashboard session reach the organization on both
        # processes, and an MCP session with an open SSE stream lives on the second one.
        mine = credentials_for(committed, world, email)
        slug = world.server.slug
        for base in (first.url, second.url):
            assert echo(base, slug, mine.key) == 200
            assert echo(base, slug, mine.token) == 200
            assert dashboard_status(base, slug, mine.cookie) == 200
        key_stream = OpenStream(second.mcp_url(slug), mine.key)
        token_stream = OpenStream(first.mcp_url(slug), mine.token)
        listening = OpenListen(second.mcp_url(slug), mine.token)
        assert not listening.ended.is_set()

        # Okta deactivates: PATCH with a path-less value.
        deactivated = scim.patch(
            f"/Users/{uid}",
            json={
                "schemas": [PATCH],
                "Operations": [{"op": "replace", "value": {"active": False}}],
            },
        )
        assert deactivated.status_code == 200, deactivated.text
        assert deactivated.json()["active"] is False
        stopped_at = time.monotonic()

        def everything_stopped() -> bool:
            return (
                key_stream.ended.is_set()
                and token_stream.ended.is_set()
                and listening.ended.is_set()
                and all(echo(b, slug, mine.key) == 403 for b in (first.url, second.url))
                and all(echo(b, slug, mine.token) == 401 for b in (first.url, second.url))
            )

        wait_until(everything_stopped, timeout=1.0, what="key, token and streams to stop")
        assert time.monotonic() - stopped_at < 1.0
        assert key_stream.clean and token_stream.clean
        assert "Access token revoked" in listening.text
        for base in (first.url, second.url):
            assert dashboard_status(base, slug, mine.cookie) == 404
        assert committed(lambda: Grant.objects.get(pk=mine.grant.pk).revoked_at) is not None
        # The ended session is gone on both processes, not only its stream.
        gone = key_stream.mcp.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
        assert gone.status_code in (403, 404)
        key_stream.close()
        token_stream.close()

        # Reactivated: the membership is back and the key works again; the grant stays revoked.
        back = scim.patch(
            f"/Users/{uid}",
            json={"schemas": [PATCH], "Operations": [{"op": "replace", "value": {"active": True}}]},
        )
        assert back.status_code == 200 and back.json()["active"] is True
        assert wait_until(lambda: echo(second.url, slug, mine.key) == 200, timeout=5)
        assert echo(first.url, slug, mine.token) == 401

        # Deleted: the key is revoked for good, the resource is gone.
        assert scim.delete(f"/Users/{uid}").status_code == 204
        assert scim.get(f"/Users/{uid}").status_code == 404
        assert wait_until(lambda: echo(second.url, slug, mine.key) == 403, timeout=5)
        assert committed(
            lambda: ApiKey.objects.get(name="person's", organization=world.org).revoked_at
        )
        assert not committed(
            lambda: Membership.objects.filter(organization=world.org, user__email=email).exists()
        )
        assert scim.delete(f"/Groups/{gid}").status_code == 204
        assert scim.get(f"/Groups/{gid}").status_code == 404


def test_entra_style_provisioning_with_its_patch_shapes(two_web_processes, world, committed):
    first, _ = two_web_processes
    email = f"ravi-{world.unique}@contoso.example"
    with scim_client(first.url, world.token) as scim:
        probe = scim.get(
            "/Users", params={"filter": 'userName eq "non-existent-user-entra@contoso.example"'}
        )
        assert probe.status_code == 200 and probe.json()["totalResults"] == 0
        created = scim.post(
            "/Users",
            json={
                "schemas": [USER, ENTERPRISE],
                "externalId": "ravi-ext",
                "userName": email,
                "active": True,
                "displayName": "Ravi K",
                "emails": [{"primary": True, "type": "work", "value": email}],
                "name": {"formatted": "Ravi K", "familyName": "K", "givenName": "Ravi"},
                ENTERPRISE: {"department": "Platform", "employeeNumber": "42"},
            },
        )
        assert created.status_code == 201, created.text
        uid = created.json()["id"]
        assert created.json()[ENTERPRISE]["department"] == "Platform"
        by_external = scim.get("/Users", params={"filter": 'externalId eq "ravi-ext"'}).json()
        assert [u["id"] for u in by_external["Resources"]] == [uid]
        by_email = scim.get(
            "/Users", params={"filter": f'emails[type eq "work"].value eq "{email}"'}
        ).json()
        assert [u["id"] for u in by_email["Resources"]] == [uid]
        bad = scim.get("/Users", params={"filter": 'userName eq "unterminated'})
        assert bad.status_code == 400 and bad.json()["scimType"] == "invalidFilter"

        patched = scim.patch(
            f"/Users/{uid}",
            json={
                "schemas": [PATCH],
                "Operations": [
                    {"op": "Replace", "path": "displayName", "value": "Ravi Kumar"},
                    {"op": "Add", "path": 'emails[type eq "work"].value', "value": f"r.{email}"},
                    {"op": "Replace", "path": "name.familyName", "value": "Kumar"},
                ],
            },
        )
        assert patched.status_code == 200, patched.text
        body = patched.json()
        assert body["displayName"] == "Ravi Kumar" and body["name"]["familyName"] == "Kumar"
        assert [e["value"] for e in body["emails"] if e["type"] == "work"] == [f"r.{email}"]

        group = scim.post(
            "/Groups",
            json={"schemas": [GROUP], "externalId": "g-ext", "displayName": "Admins"},
        ).json()
        for op, expected in (("Add", "admin"), ("Remove", "member")):
            changed = scim.patch(
                f"/Groups/{group['id']}",
                json={
                    "schemas": [PATCH],
                    "Operations": [{"op": op, "path": "members", "value": [{"value": uid}]}],
                },
            )
            assert changed.status_code == 200, changed.text
            role = committed(
                lambda: Membership.objects.get(organization=world.org, user__email=email).role
            )
            assert role == expected
        renamed = scim.patch(
            f"/Groups/{group['id']}",
            json={
                "schemas": [PATCH],
                "Operations": [{"op": "Replace", "path": "displayName", "value": "Engineers"}],
            },
        )
        assert renamed.json()["displayName"] == "Engineers"

        # Entra deactivates with a string boolean.
        off = scim.patch(
            f"/Users/{uid}",
            json={
                "schemas": [PATCH],
                "Operations": [{"op": "Replace", "path": "active", "value": "False"}],
            },
        )
        assert off.status_code == 200 and off.json()["active"] is False
        assert not committed(
            lambda: Membership.objects.filter(organization=world.org, user__email=email).exists()
        )
        assert scim.delete(f"/Users/{uid}").status_code == 204
        assert not committed(lambda: ScimUser.objects.filter(uid=uid).exists())


def test_scim_refuses_a_missing_or_wrong_token_and_other_organizations_users(
    two_web_processes, world, committed, unique
):
    first, _ = two_web_processes
    with httpx2.Client(base_url=f"{first.url}/scim/v2", timeout=30) as anonymous:
        refused = anonymous.get("/Users")
        assert refused.status_code == 401
        assert refused.headers["content-type"].startswith(SCIM)
        assert refused.headers["www-authenticate"].startswith("Bearer")
        wrong = anonymous.get("/Users", headers={"authorization": "Bearer gscim_nope"})
        assert wrong.status_code == 401

    def other_org():
        other = User.objects.create_user(f"other-{unique}@example.com", "long enough password 1")
        return tokens.token_rotate(actor=other, organization=other.personal_organization())

    other_token = committed(other_org)
    with scim_client(first.url, world.token) as scim:
        uid = scim.post("/Users", json={"schemas": [USER], "userName": f"x-{unique}@e.example"})
        uid = uid.json()["id"]
    with scim_client(first.url, other_token) as other:
        assert other.get(f"/Users/{uid}").status_code == 404
        assert other.get("/Users").json()["totalResults"] == 0
        assert other.delete(f"/Users/{uid}").status_code == 404
    # A rotated token stops working at once.
    committed(lambda: tokens.token_rotate(actor=world.owner, organization=world.org))
    with scim_client(first.url, world.token) as scim:
        assert scim.get("/Users").status_code == 401
