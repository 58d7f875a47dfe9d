"""Code tools driven by the official Python SDK through a live server: fetch with a secret,
progress and logs, elicitation and sampling in the session era and in the stateless era (MRTR)."""

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import LiveServer

from .live import code_tool_def, make_tenant

ERAS = ["legacy", "2026-07-28"]

FETCH_AND_RESHAPE = """
async def main(args, ctx):
    r = await fetch(args["url"], headers={"Authorization": "Bearer " + secrets["WEATHER_KEY"]})
    days = r["json"]["forecast"]
    return {
        "city": r["json"]["city"].title(),
        "warmest": max(days, key=lambda d: d["high"])["day"],
        "highs": [d["high"] for d in days],
    }
"""

PROGRESS = """
async def main(args, ctx):
    for step in range(1, 4):
        await ctx.progress(step, 3, f"step {step}")
    log("warning", "all steps done")
    return "done"
"""

ASK = """
async def main(args, ctx):
    answer = await elicit("What is your name?", {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
    })
    if answer["action"] != "accept":
        return "no answer"
    name = answer["content"]["name"]
    reply = await sample(f"Greet {name} in one word", max_tokens=10)
    confirm = await elicit(f"Send greeting to {name}?", {
        "type": "object", "properties": {"ok": {"type": "boolean"}},
    })
    return f"{reply['content']['text']}, {name}! sent={confirm['content']['ok']}"
"""


@pytest.fixture(scope="module")
def live(live_database):
    from django.conf import settings

    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("live-server tests need DATABASE_URL pointing at Postgres")
    server = LiveServer(live_database, extra_env={"OUTBOUND_ALLOWED_NETWORKS": "127.0.0.0/8"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def httpserver_listen_address():
    return ("127.0.0.1", 0)


@pytest.fixture
def tenant(committed, unique):
    return make_tenant(
        committed,
        f"code-sdk-{unique}",
        [
            code_tool_def(
                "forecast",
                FETCH_AND_RESHAPE,
                inputSchema={"type": "object", "properties": {"url": {"type": "string"}}},
                outputSchema={
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "warmest": {"type": "string"}},
                    "required": ["city", "warmest"],
                },
            ),
            code_tool_def("steps", PROGRESS),
            code_tool_def("greet", ASK),
        ],
        secrets={"WEATHER_KEY": f"wk-{unique}"},
    )


def client_for(live, tenant, mode, **callbacks) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {tenant.raw}"})
    return Client(
        streamable_http_client(live.mcp_url(tenant.slug), http_client=http),
        mode=mode,
        **callbacks,
    )


@pytest.mark.parametrize("mode", ERAS)
async def test_a_code_tool_fetches_with_a_secret_header_and_reshapes_the_json(
    live, tenant, httpserver, mode
):
    httpserver.expect_request(
        "/forecast", headers={"Authorization": f"Bearer wk-{tenant.slug.removeprefix('code-sdk-')}"}
    ).respond_with_json(
        {
            "city": "lisbon",
            "forecast": [{"day": "mon", "high": 18}, {"day": "tue", "high": 23}],
        }
    )
    async with client_for(live, tenant, mode) as client:
        result = await client.call_tool("forecast", {"url": httpserver.url_for("/forecast")})
    assert result.is_error is False, result.content
    assert result.structured_content == {"city": "Lisbon", "warmest": "tue", "highs": [18, 23]}


@pytest.mark.parametrize("mode", ERAS)
async def test_a_code_tool_reports_progress_and_logs(live, tenant, mode):
    progress, logs = [], []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async def on_log(params):
        logs.append((params.level, params.data))

    extra = {"log_level": "info"} if mode != "legacy" else {}
    async with client_for(live, tenant, mode, logging_callback=on_log, **extra) as client:
        result = await client.call_tool("steps", {}, progress_callback=on_progress)
    assert result.content[0].text == "done"
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert logs == [("warning", "all steps done")]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_code_tool_asks_the_user_and_the_model_in_both_eras(live, tenant, mode):
    asked, sampled = [], []

    async def on_elicit(context, params):
        asked.append(params.message)
        if "name" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"name": "Ada"})
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_sample(context, params):
        sampled.append(params.messages[0].content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hello"), model="m"
        )

    async with client_for(
        live, tenant, mode, elicitation_callback=on_elicit, sampling_callback=on_sample
    ) as client:
        result = await client.call_tool("greet", {})
    assert result.is_error is False, result.content
    assert result.content[0].text == "Hello, Ada! sent=True"
    assert asked == ["What is your name?", "Send greeting to Ada?"]
    assert sampled == ["Greet Ada in one word"]
