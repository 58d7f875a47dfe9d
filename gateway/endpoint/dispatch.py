"""Which handler answers which MCP method: one table per protocol era, built here and nowhere
else (no module adds itself to a table when it is imported).

- SESSION, the session era (2024-11-05 .. 2025-11-25): `async handler(call: SessionCall)`.
  `initialize` is not here: it makes the session (streamable.py, legacy_sse.py).
- STATELESS, 2026-07-28: `async handler(call: StatelessCall)`. `subscriptions/listen` is not
  here: it takes over the response (listen.py, routed by stateless_post.py).

Both start from the core methods every server implements on its Snapshot (servers/methods.py),
each wrapped in the layers that apply to it (gateway/pipeline/dispatch.py): tasks, MRTR,
discovery and long calls, output budgets; then add the era's own methods.
"""

from servers import methods

from ..agents import routing as agents
from ..pipeline.dispatch import core, layered
from . import session_methods, tasks
from .stateless.core import mrtr_layer, run_discover
from .stateless.envelope import MRTR_METHODS

# Each core method in the agents' layers that apply to it: tools/list lists the meta-tools on
# a big server, resources/read reads a kept result's pages, tools/call answers the platform's
# own tools and long calls (agents.layer; a code-mode program's call_tool runs each tool as
# its caller's own direct call: Served.call_tool, inner_calls.py) and holds a result to its
# output budget.
CORE = {
    **dict.fromkeys(methods.METHODS, core),
    "tools/list": layered(core, agents.list_layer),
    "resources/read": layered(core, agents.results_layer),
    "tools/call": layered(core, agents.layer, agents.budget_layer),
}
# The layers' order is part of the contract: in the session era a long call (agents) is offered
# before a task is required; in the stateless era the tasks extension decides first (SEP-2663).
SESSION_TOOLS_CALL = layered(core, agents.layer, tasks.session_layer, agents.budget_layer)
STATELESS_TOOLS_CALL = layered(CORE["tools/call"], tasks.stateless_layer, mrtr_layer)

SESSION = {
    **CORE,
    "ping": session_methods.ping,
    "logging/setLevel": session_methods.set_level,
    "resources/subscribe": session_methods.subscribe,
    "resources/unsubscribe": session_methods.unsubscribe,
    "tools/call": SESSION_TOOLS_CALL,
    **dict.fromkeys(tasks.SESSION_METHODS, session_methods.task_method),
}

STATELESS = {
    **CORE,
    **{method: layered(CORE[method], mrtr_layer) for method in MRTR_METHODS},
    "server/discover": run_discover,
    "tools/call": STATELESS_TOOLS_CALL,
    "tasks/get": tasks.stateless_get,
    "tasks/update": tasks.stateless_update,
    "tasks/cancel": tasks.stateless_cancel,
}
