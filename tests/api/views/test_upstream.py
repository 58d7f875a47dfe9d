"""Adding tools, prompts and resources from a real upstream MCP server through the API."""

from servers.models import Prompt, Tool
from tests.servers.upstream.fixtures import free_port

TOOLS = "/api/servers/weather/tools/from-upstream/"
PROMPTS = "/api/servers/weather/prompts/from-upstream/"
RESOURCES = "/api/servers/weather/resources/from-upstream/"


def test_what_an_upstream_offers_is_listed_without_saving_anything(
    api, server, upstream, loopback_allowed
):
    response = api.post(TOOLS + "preview/", {"url": upstream.url})
    assert response.status_code == 200, response.json()
    offered = {tool["name"]: tool for tool in response.json()["offered"]}
    assert offered["add"]["description"] == "Add two integers."
    resources = api.post(RESOURCES + "preview/", {"url": upstream.url}).json()["offered"]
    assert "notes://welcome" in [r["uri"] for r in resources]
    assert server.tools.count() == 1 and server.resources.count() == 1


def test_chosen_upstream_tools_are_added_renamed_as_upstream_tools(
    api, server, upstream, loopback_allowed
):
    response = api.post(
        TOOLS,
        {"url": upstream.url, "selected": ["add"], "overrides": {"add": {"name": "plus"}}},
    )
    assert response.status_code == 201, response.json()
    [tool] = response.json()
    assert (tool["name"], tool["kind"]) == ("plus", "upstream")
    row = Tool.objects.get(server=server, name="plus")
    assert (row.config["url"], row.config["tool"]) == (upstream.url, "add")
    assert list(server.tools.order_by("position").values_list("name", flat=True)) == [
        "echo",
        "plus",
    ]


def test_a_prompt_whose_name_is_taken_is_refused_with_the_field_named_then_added_renamed(
    api, server, upstream, loopback_allowed
):
    taken = api.post(PROMPTS, {"url": upstream.url, "selected": ["greet"]})
    assert taken.status_code == 400
    assert list(taken.json()["error"]["fields"]) == ["overrides.greet.name"]
    renamed = api.post(
        PROMPTS,
        {"url": upstream.url, "selected": ["greet"], "overrides": {"greet": {"name": "hello"}}},
    )
    assert renamed.status_code == 201, renamed.json()
    assert Prompt.objects.get(server=server, name="hello").config["prompt"] == "greet"


def test_an_unknown_tool_a_bad_url_or_an_unreachable_upstream_is_a_clean_field_error(
    api, server, upstream, loopback_allowed
):
    unknown = api.post(TOOLS, {"url": upstream.url, "selected": ["nope"]})
    assert unknown.status_code == 400
    assert unknown.json()["error"]["fields"] == {"selected": ["the upstream has no tool 'nope'"]}
    for url in ("file:///etc/passwd", f"http://127.0.0.1:{free_port()}/mcp"):
        response = api.post(TOOLS, {"url": url})
        assert response.status_code == 400
        assert list(response.json()["error"]["fields"]) == ["url"]
    assert server.tools.count() == 1


def test_an_outsider_cannot_add_to_my_server(outsider_api, server, upstream, loopback_allowed):
    response = outsider_api.post(TOOLS, {"url": upstream.url})
    assert response.status_code == 404
    assert server.tools.count() == 1
