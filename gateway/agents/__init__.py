"""Built for agents' context windows and patience (issue 17), per server, without code:

- discovery.py: progressive discovery; big servers list a few meta-tools (search, describe,
  call) instead of every tool; search ranks with BM25 over an index cached with the snapshot.
- budgets.py and results.py: output budgets; an oversized result is cut at a clean boundary
  and kept in Redis for a while, readable in pages through resources/read.
- longcalls.py: task-capable tools for clients without Tasks; the call waits (with progress)
  up to a limit, then hands back a handle and provided tools to follow it.
- codemode.py: under discovery, when the server turns it on, getmcp_run_code runs the agent's
  Python program in the code tools' sandbox; each call_tool in it is an inner tools/call of
  the caller (gateway/endpoint/inner_calls.py).
- routing.py: the few hooks the endpoint calls (one per era), so every meta-call goes back
  through the ordinary tools/call dispatch.
- the settings, their defaults and their validation live in servers/discovery/config.py.
"""
