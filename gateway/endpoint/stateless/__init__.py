"""MCP 2026-07-28 (stateless) on /mcp/<slug>, beside the session era on the same URL.

Every request carries what the server needs to know about its client in `params._meta`, so any
worker answers it without a session. Checks run in the order the spec's error ladder gives them:
the `_meta` envelope (-32602), the routing headers against the body (-32020), the protocol
version (-32022), then the method (HTTP 404 + -32601). Results carry `resultType`, the server's
identity and, where cacheable, `ttlMs`/`cacheScope`. A call that needs the client's input answers
`input_required` (MRTR) with a sealed `requestState` holding the answers of earlier rounds, so the
same workflow re-runs from the top and finds them.

The package holds the era's pieces: envelope.py (is it modern; `_meta` and the headers),
core.py (the handlers of the core methods), request_state.py (MRTR's sealed requestState),
results.py (decorating a result), responder.py (JSON or SSE). ../stateless_post.py answers one
POST with them, through the method table in ../dispatch.py; nothing here imports those, so the
tasks extension (../tasks.py) can build on the pieces. Nothing is imported in this file.
"""
