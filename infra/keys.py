"""Names of the Redis keys the endpoint and the domain share (see docs/architecture.md).

Hash tags (the part in braces) decide a key's slot on a Redis Cluster: whatever one Lua script,
one MULTI or one multi-key command (BLPOP over a response and a cancellation) touches carries
the same tag, so it lives in one slot. Per session `{<sid>}`, per organization's quota
`{o<id>}`. Pipelines without MULTI need none: redis-py's cluster client splits them by node.
On a standalone Redis a tag is only part of the name.
"""


def _tag(value: object) -> str:
    return "{" + str(value) + "}"


def server_generation(slug: str) -> str:
    return f"mcp:gen:srv:{slug}"


def key_generation(digest: str) -> str:
    return f"mcp:gen:key:{digest}"


def state_changes() -> str:
    """The pub/sub channel on which a change of hot-path state (a server's or key's generation,
    a session ended or changed, a server's inspector opened) is announced to every web process's
    state mirror (servers/state_events.py, gateway/pipeline/mirror.py)."""
    return "mcp:state"


def session(sid: str) -> str:
    return f"mcp:s:{_tag(sid)}"


def session_stream(sid: str, stream: str) -> str:
    return f"mcp:s:{_tag(sid)}:ev:{stream}"


def session_wake(sid: str) -> str:
    """The pub/sub channel that tells a session's open streams to read (infra/hub.py)."""
    return f"mcp:s:{_tag(sid)}:wake"


# Published on a session's wake channel when the session was ended from outside (its person was
# deprovisioned, accounts/deprovision.py): its open streams check the session at once and close
# instead of waiting for their next keep-alive turn.
SESSION_ENDED = b"!ended"


def person_changed(user_id: int) -> str:
    """The pub/sub channel telling a person's open inspector sockets to check them again now
    (inspector/consumers.py): published when they are removed from or deactivated in an
    organization."""
    return f"mcp:person:{user_id}:changed"


def credential_ended(ident: str) -> str:
    """The pub/sub channel telling the open session-less streams (2026-07-28
    `subscriptions/listen`) of a credential (`key:<id>`, `grant:<id>`) to check it again now:
    published when its person is deprovisioned (accounts/deprovision.py)."""
    return f"mcp:cred:{ident}:ended"


def client_response(sid: str, request_id: str) -> str:
    return f"mcp:s:{_tag(sid)}:resp:{request_id}"


def cancellation(sid: str, request_id: str) -> str:
    return f"mcp:s:{_tag(sid)}:cancel:{request_id}"


def server_sessions(server_id: int) -> str:
    return f"mcp:srv:{server_id}:sessions"


def resource_subscribers(server_id: int, uri: str) -> str:
    return f"mcp:srv:{server_id}:sub:{uri}"


def session_subscriptions(sid: str) -> str:
    return f"mcp:s:{_tag(sid)}:subs"


def server_events(server_id: int) -> str:
    return f"mcp:srv:{server_id}:events"


def rate_window(server_id: int, credential: str, minute: int) -> str:
    return f"mcp:rl:{server_id}:{credential}:{minute}"


KEY_USAGE = "mcp:keys:used"
GRANT_USAGE = "mcp:grants:used"


# -- every other Redis key of the platform: built here only, so a newcomer finds each name once --


def throttle(kind: str, scope: str, digest: str) -> str:
    """A login/reset/invitation throttle window (accounts.throttle); `digest` of the value."""
    return f"throttle:{kind}:{scope}:{digest}"


THROTTLE_PATTERN = "throttle:*"  # every throttle window (SCAN MATCH)


CALL_LOG_STREAM = "mcp:calllog:stream"


def task_events(task_id: str) -> str:
    """Pub/sub channel of an MCP task's status and messages (mcptasks.events)."""
    return f"mcp:task:{task_id}:events"


def task_wake(task_id: str) -> str:
    """List a waiting task's worker blocks on for its input answers (mcptasks.events)."""
    return f"mcp:task:{task_id}:wake"


def oauth_registrations(source: str, minute: int) -> str:
    """Dynamic client registrations from one address in one wall-clock minute."""
    return f"oauth:reg:{source}:{minute}"


def oauth_assertion_jti(issuer_digest: str, jti_digest: str) -> str:
    """A JWT assertion's `jti` seen from one issuer (ID-JAG, client assertions), kept until its
    `exp`: a second use is a replay."""
    return f"oauth:jti:{issuer_digest}:{jti_digest}"


def http_response_cache(server_id: int | None, fingerprint: str, digest: str) -> str:
    """A cached response of an HTTP tool (per tool version and request)."""
    return f"mcp:http:cache:{server_id}:{fingerprint}:{digest}"


def http_oauth_token(digest: str) -> str:
    """An HTTP tool's upstream OAuth access token, encrypted (per client credentials)."""
    return f"mcp:http:oauth:{digest}"


def upstream_refresh_scheduled(server_id: int) -> str:
    """Debounce flag: a refresh of this server's upstream tools is already queued."""
    return f"mcp:upstream:{server_id}:refresh-scheduled"


def upstream_health(server_id: int | None, url_digest: str) -> str:
    return f"mcp:upstream:{server_id or 0}:{url_digest}:health"


def stream_leases_of_session(sid: str) -> str:
    return f"mcp:streams:s:{_tag(sid)}"


def stream_leases_of_caller(server_id: int, caller: str) -> str:
    return f"mcp:streams:k:{server_id}:{caller}"


def vault_generation(organization_id: int) -> str:
    """Bumped whenever an organization's secrets change: per-process vault caches compare it."""
    return f"vault:gen:{organization_id}"


HEARTBEAT_WORKERS = "getmcp:heartbeat:workers"
HEARTBEAT_BEAT = "getmcp:heartbeat:beat"
# A hash: process name -> JSON note while `make run`'s supervisor restarts it (scripts/run.py).
SUPERVISOR_RESTARTS = "getmcp:supervisor:restarts"


def inspector_watched(slug: str) -> str:
    """Set while someone has the server's live inspector open (inspector/watch.py)."""
    return f"mcp:inspect:{slug}"


def inspector_sockets(session_digest: str) -> str:
    """Sorted set of a dashboard session's open inspector sockets, each scored by the time its
    lease ends (inspector/sockets.py)."""
    return f"mcp:inspect:sockets:{session_digest}"


def inspector_events(server_id: int) -> str:
    """Pub/sub channel of a server's live-inspector events, read by its open inspector sockets
    through each process's hub (inspector/publish.py, inspector/consumers.py)."""
    return f"mcp:inspect:events:{server_id}"


def stored_result(result_id: str) -> str:
    """A whole tool result cut by an output budget, read in pages (gateway/agents/results.py)."""
    return f"mcp:results:{result_id}"


def stored_results_of_org(org_id: int) -> str:
    return f"mcp:results:org:{org_id}"


def stored_results_of_owner(owner_id: int) -> str:
    """The same over every organization one person pays for (members "<org>:<id>:<chars>")."""
    return f"mcp:results:owner:{owner_id}"


def quota_month(organization_id: int, month: str) -> str:
    """An organization's calls in one month (servers/quotas.py)."""
    return f"mcp:q:{_tag(f'o{organization_id}')}:{month}"


def quota_minute(
    organization_id: int, server_id: int, ident: str, minute: int, tool: str | None = None
) -> str:
    """A key's or grant's calls to a server (or one tool of it) in one minute: in its
    organization's slot, since one script counts it with the month's count."""
    tail = f":t:{tool}" if tool is not None else ""
    return f"mcp:q:{_tag(f'o{organization_id}')}:min:{server_id}:{ident}:{minute}{tail}"


# Scan patterns for the metrics scrape (observability/scrape.py).
SESSIONS_PATTERN = "mcp:s:*"
UPSTREAM_HEALTH_PATTERN = "mcp:upstream:*:health"


def connect_state(state: str) -> str:
    """A connected-account authorization in progress (connections/flow.py): who, which
    provider, which scopes, the PKCE verifier; read once (GETDEL), expiring."""
    return f"mcp:conn:state:{state}"


def connect_elicitation(elicitation_id: str) -> str:
    """A URL elicitation's link (connections/need.py): whose and for which provider, until
    the person opens it and the flow starts."""
    return f"mcp:conn:elicit:{elicitation_id}"


def connect_link(organization_id: int, user_id: int, provider_id: int, scopes: str) -> str:
    """The link a person was last sent to connect this provider with these scopes: a call run
    again (a task after its input, a stateless retry) shows the same link and id."""
    return f"mcp:conn:link:{organization_id}:{user_id}:{provider_id}:{scopes}"


def connection_refresh_lock(connection_id: int) -> str:
    """Held while one process refreshes a connection's tokens (connections/tokens.py)."""
    return f"mcp:conn:refresh:{connection_id}"


def connection_ready(organization_id: int, user_id: int, provider_key: str) -> str:
    """Pushed to when a person's connection is stored, so a call waiting on the person's
    consent goes on at once (connections/need.py)."""
    return f"mcp:conn:ready:{organization_id}:{user_id}:{provider_key}"
