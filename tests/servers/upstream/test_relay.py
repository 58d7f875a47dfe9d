"""Resources and prompts of a real upstream, read through the relay."""

import pytest

from servers.upstream import health
from servers.upstream.connection import Upstream, UpstreamRequestFailed, UpstreamUnreachable
from servers.upstream.relay import (
    get_prompt,
    list_prompts,
    list_resource_templates,
    list_resources,
    read_resource,
)

from .fixtures import free_port


async def test_resources_are_listed_and_read(upstream, loopback_allowed):
    target = Upstream(url=upstream.url)
    resources = await list_resources(target)
    assert [(r["uri"], r["name"]) for r in resources] == [("notes://welcome", "welcome")]
    templates = await list_resource_templates(target)
    assert [t["uriTemplate"] for t in templates] == ["notes://by-day/{day}"]
    assert await read_resource(target, "notes://welcome") == {
        "contents": [
            {"uri": "notes://welcome", "mimeType": "text/plain", "text": "Welcome aboard."}
        ]
    }
    templated = await read_resource(target, "notes://by-day/monday")
    assert templated["contents"][0]["text"] == "Notes of monday."


async def test_prompts_are_listed_and_rendered(upstream, loopback_allowed):
    target = Upstream(url=upstream.url)
    prompts = await list_prompts(target)
    assert [(p["name"], p["arguments"][0]["name"]) for p in prompts] == [("greet", "who")]
    result = await get_prompt(target, "greet", {"who": "Ada"})
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please greet Ada warmly."}}
    ]


async def test_an_unknown_resource_is_the_upstreams_error(upstream, loopback_allowed):
    with pytest.raises(UpstreamRequestFailed):
        await read_resource(Upstream(url=upstream.url), "notes://nope")


async def test_an_unreachable_upstream_is_named_and_recorded(loopback_allowed):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(UpstreamUnreachable, match="the connection failed"):
        await read_resource(Upstream(url=url, server_id=990003), "notes://welcome")
    assert (await health.ahealth(990003, url))["status"] == "unreachable"
