"""Per-tool access (servers/access.py), proven as a generated matrix: every surface x every
method x every kind of principal, through a live server and real clients (the official Python
SDK on the MCP paths, httpx2 on REST, Webtools, discovery and the raw protocol paths).

For a limited principal, what it may not use is absent from every list and refused on every
call path with the error a tool (resource, prompt) that does not exist gets: the same answer,
name for name. The unlimited key sees and calls everything, so each check can fail.
"""

import json
from types import SimpleNamespace

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from accounts.models import ApiKey, Membership, User
from infra import keys as rkeys
from infra.redis import sync_client
from oauth.models import Client as OAuthClient
from oauth.models import Grant
from oauth.tokens import tokens_issue
from servers.definition import import_definition
from servers.models import Server
from tests.gateway.endpoint.conftest import server_definition
from tests.gateway.endpoint.mcp_http import RawMcp
from tests.gateway.endpoint.test_tasks import Modern
from tests.waiting import wait_until_async

MODERN = "2026-07-28"
HIDDEN = SimpleNamespace(
    tool="classified",
    resource="note://classified",
    template="classified://{id}",
    prompt="classified_prompt",
    asking="classified_ask",
)
MISSING = SimpleNamespace(tool="no_such_tool", resource="note://nothing", prompt="no_such_prompt")
LIMIT = {
    "tools": ["echo", "ask_name"],
    "resources": ["note://readme", "note://items/{id}"],
    "prompts": ["greet"],
}
TOOLS = [
    *server_definition("x")["tools"],
    {
        "name": "classified",
        "description": "Only some may call me.",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
        "kind": "static",
        "config": {"content": [{"type": "text", "text": "secret"}]},
    },
    {**server_definition("x")["tools"][2], "name": "classified_ask"},
]
RESOURCES = [
    *server_definition("x")["resources"],
    {"uri": "note://classified", "name": "cl", "mimeType": "text/plain", "text": "secret"},
]
TEMPLATES = [
    *server_definition("x")["resourceTemplates"],
    {"uriTemplate": "classified://{id}", "name": "cl", "mimeType": "text/plain", "text": "s"},
]
PROMPTS = [
    *server_definition("x")["prompts"],
    {
        "name": "classified_prompt",
        "description": "Secret prompt.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "psst"}}],
    },
]
PRINCIPALS = ["unlimited key", "limited key", "limited grant", "role-limited member"]


@pytest.fixture
def world(committed, unique):
    def make():
        owner = User.objects.create_user(f"own-{unique}@example.com", "long enough password 1")
        org = owner.personal_organization()
        member = User.objects.create_user(f"mem-{unique}@example.com", "long enough password 1")
        Membership.objects.create(organization=org, user=member, role=Membership.MEMBER)
        definition = server_definition(
            f"acc-{unique}",
            auth="api_key+oauth",
            tools=TOOLS,
            resources=RESOURCES,
            resourceTemplates=TEMPLATES,
            prompts=PROMPTS,
        )
        server = import_definition(definition, org)
        Server.objects.filter(pk=server.pk).update(role_access={"member": LIMIT})
        server.refresh_from_db()
        server.save()  # through the signals, like the dashboard would
        _, unlimited = ApiKey.issue(org, "all", created_by=owner)
        limited_key, limited = ApiKey.issue(org, "some", created_by=owner)
        limited_key.access = {str(server.pk): LIMIT}
        limited_key.save()
        _, by_member = ApiKey.issue(org, "member's", created_by=member)
        app = OAuthClient.objects.create(
            client_id=f"https://app-{unique}.example/client.json",
            client_name="App",
            redirect_uris=["https://app.example/cb"],
        )
        grant = Grant.objects.create(
            user=owner,
            organization=org,
            server=server,
            client=app,
            scope="mcp",
            resource=f"http://localhost/mcp/{server.slug}",
            access=LIMIT,
        )
        token = tokens_issue(grant=grant, client=app)["access_token"]
        return SimpleNamespace(
            server=server,
            slug=server.slug,
            limited_key=limited_key,
            tokens={
                "unlimited key": unlimited,
                "limited key": limited,
                "limited grant": token,
                "role-limited member": by_member,
            },
        )

    return committed(make)


# -- what each surface shows and answers, normalised -----------------------------------------------


def _error(exc: MCPError, name: str) -> tuple:
    return exc.code, exc.message.replace(name, "<name>")


async def _sdk_surface(client: Client) -> dict:
    async def refusal(call, name):
        try:
            result = await call(name)
        except MCPError as exc:
            return _error(exc, name)
        if getattr(result, "is_error", False):
            return ("tool error", result.content[0].text.replace(name, "<name>"))
        return "allowed"

    async with client:
        tools = {t.name for t in (await client.list_tools()).tools}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        return {
            "listed": tools | resources | templates | prompts,
            "tool": [await refusal(lambda n: client.call_tool(n, {}), n) for n in _tools()],
            "resource": [await refusal(client.read_resource, n) for n in _resources()],
            "prompt": [await refusal(lambda n: client.get_prompt(n, {}), n) for n in _prompts()],
        }


def _tools():
    return [HIDDEN.tool, MISSING.tool]


def _resources():
    return [HIDDEN.resource, "classified://7", MISSING.resource]


def _prompts():
    return [HIDDEN.prompt, MISSING.prompt]


def _http(token: str) -> httpx2.Client:
    return httpx2.Client(timeout=30, headers={"authorization": f"Bearer {token}"})


def surface_session(url, token) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return anyio.run(
        _sdk_surface, Client(streamable_http_client(url, http_client=http), mode="legacy")
    )


def surface_stateless(url, token) -> dict:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return anyio.run(
        _sdk_surface, Client(streamable_http_client(url, http_client=http), mode=MODERN)
    )


def surface_legacy_sse(url, token) -> dict:
    transport = sse_client(url + "/sse", headers={"Authorization": f"Bearer {token}"})
    return anyio.run(_sdk_surface, Client(transport, mode="legacy"))


def surface_rest(url, token) -> dict:
    with _http(token) as http:
        document = http.get(url + "/openapi.json").json()

        def refusal(name):
            response = http.post(f"{url}/tools/{name}", json={})
            if response.status_code == 200:
                return "allowed"
            return response.status_code, response.json()["error"].replace(name, "<name>")

        listed = {path.rsplit("/", 1)[-1] for path in document["paths"]}
        return {"listed": listed, "tool": [refusal(n) for n in _tools()]}


def surface_webtools(url, token) -> dict:
    base = url.replace("/mcp/", "/webtools/") + "/"
    with _http(token) as http:
        metadata = http.get(base).json()

        def refusal(name):
            response = http.post(base, json={"action": name, "request": {}})
            if response.status_code == 200:
                return "allowed"
            return response.status_code, json.dumps(response.json()).replace(name, "<name>")

        listed = {action["name"] for action in metadata["actions"]}
        return {"listed": listed, "tool": [refusal(n) for n in _tools()]}


def surface_info_and_discovery(url, token) -> dict:
    with _http(token) as http:
        page = http.get(url, headers={"accept": "text/html"}).text
        discovery = http.get(url + "/.well-known/mcp.json").text
    listed = {name for name in ("echo", HIDDEN.tool) if name in page}
    # The discovery document names no tools; it must not leak a withheld one either.
    leaked = {name for name in (HIDDEN.tool, HIDDEN.prompt) if name in discovery}
    return {"listed": listed | leaked}


def surface_tasks(url, token) -> dict:
    """Tasks in both designs: a 2025-11-25 session's task-augmented call, the 2026-07-28
    extension's stateless one."""
    session = RawMcp(url, key=token)
    session.initialize(capabilities={"tasks": {}})

    def in_session(name):
        _, messages = session.request(
            "tools/call", {"name": name, "arguments": {}, "task": {"ttl": 60000}}
        )
        return _wire(messages[-1], name)

    modern = Modern(url, token)

    def stateless(name):
        _, message = modern.send("tools/call", {"name": name, "arguments": {}})
        return _wire(message, name)

    return {
        "tool": [in_session(n) for n in _tools()],
        "tool (stateless)": [stateless(n) for n in _tools()],
    }


def surface_mrtr(url, token) -> dict:
    """A later MRTR round (it carries requestState and answers) of a call."""
    modern = Modern(url, token, capabilities={"elicitation": {}})

    def continuation(name):
        params = {
            "name": name,
            "arguments": {},
            "inputResponses": {"q": {"action": "accept", "content": {"name": "x"}}},
        }
        _, message = modern.send("tools/call", params)
        return _wire(message, name)

    return {"tool": [continuation(n) for n in (HIDDEN.asking, MISSING.tool)]}


def _wire(message: dict, name: str):
    if "error" in message and "No task worker" in message["error"]["message"]:
        return "allowed"  # past the access check: it would run, had a worker been started
    if "error" in message:
        error = message["error"]
        return error["code"], error["message"].replace(name, "<name>")
    return "allowed"


SURFACES = {
    "streamable session (2025-11-25)": surface_session,
    "stateless (2026-07-28)": surface_stateless,
    "legacy HTTP+SSE": surface_legacy_sse,
    "REST and OpenAPI": surface_rest,
    "Webtools": surface_webtools,
    "info page and discovery": surface_info_and_discovery,
    "tasks (both designs)": surface_tasks,
    "MRTR continuation": surface_mrtr,
}


@pytest.mark.parametrize("surface", list(SURFACES))
@pytest.mark.parametrize("principal", PRINCIPALS)
def test_a_principal_sees_and_calls_only_what_it_may_on_every_surface(
    asgi_server, world, principal, surface
):
    seen = SURFACES[surface](asgi_server.mcp_url(world.slug), world.tokens[principal])
    withheld = {HIDDEN.tool, HIDDEN.resource, HIDDEN.template, HIDDEN.prompt}
    limited = principal != "unlimited key"
    if "listed" in seen:
        assert "echo" in seen["listed"]
        if limited:
            assert not seen["listed"] & withheld, seen["listed"]
        elif surface.startswith(("streamable", "stateless", "legacy")):
            assert withheld <= seen["listed"]
        else:
            assert HIDDEN.tool in seen["listed"]
    for kind, answers in seen.items():
        if kind == "listed":
            continue
        missing = answers[-1]
        assert missing != "allowed"
        hidden = answers[:-1]
        if limited:
            # Refused exactly like something that does not exist, name for name.
            assert all(answer == missing for answer in hidden), (kind, answers)
        else:
            assert all(answer != missing for answer in hidden), (kind, answers)


def test_every_mcp_path_refuses_a_withheld_tool_with_one_error(asgi_server, world):
    url, token = asgi_server.mcp_url(world.slug), world.tokens["limited key"]
    answers = {
        name: SURFACES[name](url, token)["tool"][0]
        for name in (
            "streamable session (2025-11-25)",
            "stateless (2026-07-28)",
            "legacy HTTP+SSE",
            "tasks (both designs)",
            "MRTR continuation",
        )
    }
    assert set(answers.values()) == {(-32602, "Unknown tool: <name>")}, answers


def listening_streams() -> set[bytes]:
    """The sessions whose open streams listen for a wake-up now (their pub/sub channels)."""
    return set(sync_client().pubsub_channels(rkeys.session_wake("*")))


def test_narrowing_a_key_tells_its_open_session_and_refuses_its_next_call(
    asgi_server, world, committed
):
    url, token = asgi_server.mcp_url(world.slug), world.tokens["limited key"]
    notes = []

    async def run():
        changed = anyio.Event()

        async def on_message(message):
            if isinstance(message, types.ServerNotification):
                notes.append(message)
                if isinstance(message, types.ToolListChangedNotification):
                    changed.set()

        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        client = Client(
            streamable_http_client(url, http_client=http), mode="legacy", message_handler=on_message
        )
        streams_before = listening_streams()
        async with client:
            assert (await client.call_tool("echo", {"message": "hi"})).content[
                0
            ].text == "You said hi"
            # The GET stream must be open before the change, as a long-running client's is.
            await wait_until_async(
                lambda: listening_streams() - streams_before,
                what="the session's GET stream to listen for changes",
            )

            def narrow():
                key = ApiKey.objects.get(pk=world.limited_key.pk)
                key.access = {str(world.server.pk): {**LIMIT, "tools": ["ask_name"]}}
                key.save()

            await anyio.to_thread.run_sync(lambda: committed(narrow))
            with anyio.fail_after(10):
                await changed.wait()
            listed = {t.name for t in (await client.list_tools()).tools}
            assert listed == {"ask_name"}
            with pytest.raises(MCPError) as refused:
                await client.call_tool("echo", {"message": "again"})
            assert (refused.value.code, refused.value.message) == (-32602, "Unknown tool: echo")

    anyio.run(run)


def test_an_mrtr_round_after_the_tool_was_withdrawn_is_refused(asgi_server, world, committed):
    url, token = asgi_server.mcp_url(world.slug), world.tokens["limited key"]
    modern = Modern(url, token, capabilities={"elicitation": {}})
    first = modern.result("tools/call", {"name": "ask_name", "arguments": {}})
    assert first["resultType"] == "input_required"

    def narrow():
        key = ApiKey.objects.get(pk=world.limited_key.pk)
        key.access = {str(world.server.pk): {"tools": ["echo"]}}
        key.save()

    committed(narrow)
    question = next(iter(first["inputRequests"]))
    _, message = modern.send(
        "tools/call",
        {
            "name": "ask_name",
            "arguments": {},
            "inputResponses": {question: {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": first["requestState"],
        },
    )
    assert message["error"]["code"] == -32602
    assert message["error"]["message"] == "Unknown tool: ask_name"


def test_a_members_role_limit_follows_a_role_change(asgi_server, world, committed):
    url = asgi_server.mcp_url(world.slug)
    token = world.tokens["role-limited member"]
    with _http(token) as http:
        assert http.post(f"{url}/tools/{HIDDEN.tool}", json={}).status_code == 404

        def promote():
            membership = Membership.objects.get(
                organization=world.server.organization, role=Membership.MEMBER
            )
            membership.role = Membership.ADMIN
            membership.save()

        committed(promote)
        response = http.post(f"{url}/tools/{HIDDEN.tool}", json={})
        assert response.status_code == 200, response.text
