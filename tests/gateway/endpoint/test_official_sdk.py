"""The official Python SDK (mcp >= 2) drives a Bearer-protected server end to end."""

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def sdk_client(url: str, key: str, **callbacks) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    return Client(streamable_http_client(url, http_client=http), mode="legacy", **callbacks)


async def test_it_serves_the_official_python_sdk(asgi_server, tenant):
    logs, asked, sampled = [], [], []

    async def on_log(params):
        logs.append(params)

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(context, params):
        sampled.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="test-model",
        )

    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total))

    client = sdk_client(
        asgi_server.mcp_url(tenant.slug),
        tenant.raw,
        logging_callback=on_log,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
    )
    async with client:
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} >= {"echo", "slow_steps", "ask_name", "ask_model"}

        echoed = await client.call_tool("echo", {"message": "hello"})
        assert echoed.content[0].text == "You said hello"

        stepped = await client.call_tool("slow_steps", {}, progress_callback=on_progress)
        assert stepped.content[0].text == "done"
        assert progress == [(1, 2), (2, 2)]
        assert [entry.data for entry in logs] == ["starting", "details"]

        greeted = await client.call_tool("ask_name", {})
        assert asked == ["What is your name?"]
        assert greeted.content[0].text == "Hello Ada"

        answered = await client.call_tool("ask_model", {"question": "Capital of France?"})
        assert sampled == ["Capital of France?"]
        assert answered.content[0].text == "Model said: Paris"

        resources = await client.list_resources()
        assert [r.uri for r in resources.resources] == ["note://readme"]
        read = await client.read_resource("note://items/42")
        assert read.contents[0].text == "Item 42"

        prompt = await client.get_prompt("greet", {"who": "Grace"})
        assert prompt.messages[0].content.text == "Hi Grace"
