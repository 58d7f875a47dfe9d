"""Which handler answers which MCP method: one table per protocol era, built here and nowhere
else (no module adds itself to a table when it is imported).

- SESSION, the session era (2024-11-05 .. 2025-11-25): `async handler(gate, request, ctx)`.
  `initialize` is not here: it makes the session (streamable.py, legacy_sse.py).
- STATELESS, 2026-07-28: `async handler(call: StatelessCall)`. `subscriptions/listen` is not
  here: it takes over the response (listen.py, routed by stateless/post.py).

Both start from the core methods every server implements on its Snapshot (servers/methods.py)
and add the era's own methods and the tasks extension (tasks.py), which also takes tools/call.
"""

from servers import methods

from . import session_methods, tasks
from .stateless import core
from .stateless.envelope import MRTR_METHODS

SESSION = {
    **dict.fromkeys(methods.METHODS, session_methods.core),
    "ping": session_methods.ping,
    "logging/setLevel": session_methods.set_level,
    "resources/subscribe": session_methods.subscribe,
    "resources/unsubscribe": session_methods.unsubscribe,
    "tools/call": session_methods.tools_call,
    **dict.fromkeys(tasks.SESSION_METHODS, session_methods.task_method),
}

STATELESS = {
    **dict.fromkeys(methods.METHODS, core.run_method),
    **dict.fromkeys(MRTR_METHODS, core.run_mrtr),
    "server/discover": core.run_discover,
    "tools/call": tasks.stateless_tools_call,
    "tasks/get": tasks.stateless_get,
    "tasks/update": tasks.stateless_update,
    "tasks/cancel": tasks.stateless_cancel,
}
