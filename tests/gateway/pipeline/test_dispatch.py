"""Dispatch: a method's handler is the core wrapped in its layers, the first one outermost; a
layer answers the call itself or hands it on inside."""

from gateway.endpoint import dispatch as tables
from gateway.pipeline.dispatch import layered


async def test_layers_wrap_the_core_the_first_one_outermost():
    seen: list[str] = []

    def layer(name):
        async def wrap(call, inner):
            seen.append(f"{name} in")
            result = await inner(call)
            seen.append(f"{name} out")
            return {**result, "by": [name, *result.get("by", [])]}

        return wrap

    async def core(call):
        seen.append("core")
        return {"call": call}

    handler = layered(core, layer("tasks"), layer("discovery"), layer("budgets"))
    assert await handler(7) == {"call": 7, "by": ["tasks", "discovery", "budgets"]}
    assert seen == [
        "tasks in",
        "discovery in",
        "budgets in",
        "core",
        "budgets out",
        "discovery out",
        "tasks out",
    ]


async def test_a_layer_that_answers_never_reaches_the_core():
    async def answers(call, inner):
        return {"answered": call}

    async def core(call):
        raise AssertionError("the core ran")

    assert await layered(core, answers)(3) == {"answered": 3}


def test_each_era_calls_tools_through_its_own_layers_in_their_order():
    # Session era: a long call is offered before a task is required; stateless: the tasks
    # extension decides first (SEP-2663), then MRTR, then discovery and budgets.
    assert tables.SESSION["tools/call"].__qualname__ == ("layer>session_layer>budget_layer>core")
    assert tables.STATELESS["tools/call"].__qualname__ == (
        "stateless_layer>mrtr_layer>layer>budget_layer>core"
    )
