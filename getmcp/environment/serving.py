"""The MCP endpoint, its state mirror and its outage bounds, and the live inspector."""

from .parsing import Variables, var


class EndpointVariables(Variables):
    """The MCP endpoint."""

    MCP_MAX_BODY_BYTES: int = var(4 * 1024 * 1024, "largest request body `/mcp/` accepts")
    MCP_SESSION_IDLE_SECONDS: int = var(
        3600, "an MCP session expires after this long without a request"
    )
    MCP_SSE_KEEPALIVE_SECONDS: float = var(15, "keep-alive interval on open SSE streams")
    MCP_CLIENT_REQUEST_TIMEOUT_SECONDS: float = var(
        300,
        "how long a tool waits for the client's answer (elicitation, sampling, roots)",
    )
    MCP_ALLOWED_ORIGINS: list[str] = var(
        [], "comma-separated browser origins allowed on every server besides same-origin"
    )
    # Bounded streams (issue 9): session GET streams, the old SSE transport and
    # subscriptions/listen (gateway/endpoint/stream_limits.py).
    MCP_STREAMS_PER_SESSION: int = var(
        8,
        "open SSE streams one session may hold (across processes); beyond it 429 with "
        "`Retry-After`",
    )
    MCP_STREAMS_PER_KEY: int = var(
        100,
        "open SSE streams one API key (or anonymous client address) may hold on a server",
    )
    MCP_STREAMS_PER_PROCESS: int = var(
        10000, "open SSE streams per web process; beyond it 503 with `Retry-After`"
    )
    # Per-process caches, least recently used first out.
    SNAPSHOT_CACHE_SIZE: int = var(
        2000, "compiled server snapshots a process keeps (least recently used dropped first)"
    )
    VAULT_CACHE_SIZE: int = var(
        2000,
        "decrypted secret sets (per organization, server, live/test) a process keeps",
    )
    KEY_CACHE_SIZE: int = var(
        100000, "API-key/token digests a process keeps, known and unknown ones each"
    )
    DISCOVERY_SEMANTIC_SEARCH: bool = var(
        True,
        "discovery's tool search fuses BM25 with sentence embeddings (a local model, about "
        "180 MB per process that loads it); `false`: BM25 alone "
        "([bench/discovery/README.md](bench/discovery/README.md))",
    )
    # Stateless era: cache hints on list/read results, and the sealed MRTR requestState.
    MCP_CACHE_TTL_MS: int = var(
        60000, "`ttlMs` cache hint on 2026-07-28 list, read and discover results"
    )
    MCP_REQUEST_STATE_SECRET: str = var(
        "",
        "key that seals the MRTR `requestState` (2026-07-28 multi-round calls)",
        shown="`SECRET_KEY`",
    )
    MCP_REQUEST_STATE_TTL_SECONDS: int = var(3600, "how long a sealed `requestState` stays valid")
    # Slow clients (slowloris): the header deadline is getmcp.http_protocol's (uvicorn has none
    # of its own); the body's is the ASGI app's, for /mcp/ and Django alike.
    HTTP_HEADER_TIMEOUT_SECONDS: float = var(
        10,
        "a connection that has not sent a complete request head this long after opening (or "
        "after its last response) is closed (needs `--http getmcp.http_protocol:HttpProtocol` "
        "or the `getmcp.http_protocol.UvicornWorker` gunicorn worker)",
    )
    HTTP_BODY_TIMEOUT_SECONDS: float = var(
        30, "a request body must arrive within this long (408 on `/mcp/`)"
    )
    # Tenants' MCP tasks of one organization running at once (mcptasks/fairness.py).
    MCP_TASKS_PER_ORG_CONCURRENCY: int = var(
        4, "MCP tasks of one organization running at once; the others wait their turn"
    )
    GOV_DEFAULT_MONTHLY_CALL_QUOTA: int = var(
        0,
        "monthly tool-call quota of organizations that set none ([docs/quotas.md](docs/quotas.md))",
        shown="`0` (none)",
    )
    GOV_DEFAULT_CALLS_PER_MINUTE: int = var(
        0,
        "calls per minute of keys and grants that set none ([docs/quotas.md](docs/quotas.md))",
        shown="`0` (none)",
    )
    # Output budgets (gateway/agents/results.py); organizations are free to make, hence the
    # second cap over all the organizations one person pays for.
    RESULT_STORE_MAX_CHARS_PER_ORG: int = var(
        50_000_000,
        "characters of whole tool results one organization may keep in Redis behind truncated "
        "answers (oldest evicted first)",
    )
    RESULT_STORE_MAX_CHARS_PER_OWNER: int = var(
        100_000_000,
        "the same per paying account, over all its organizations",
    )


class OutageVariables(Variables):
    """Outages: the state mirror, timeouts and health checks on Postgres and Redis."""

    MCP_STATE_MAX_STALE_SECONDS: float = var(
        1,
        "each web process re-reads the state it serves at least this often, the bound within "
        "which a change is enforced everywhere even when its announcement was lost; `0` turns "
        "the mirror off ([docs/scaling.md](docs/scaling.md))",
    )
    MCP_STATE_KEEP_SECONDS: float = var(
        300,
        "a web process keeps the state of every server and key used this recently fresh in "
        "the background, so their calls read no Redis ([docs/scaling.md](docs/scaling.md)); "
        "`0`: only what was used within a second",
    )
    MCP_STATE_MIRROR_SIZE: int = var(
        20000,
        "servers, keys and sessions (each) a process mirrors that way (least recently used "
        "dropped first)",
    )
    SECURITY_RECHECK_SECONDS: float = var(
        2,
        "how often each process re-reads the change log, the bound within which a revocation, "
        "pause or definition change made while Redis was down (or lost by Redis) takes "
        "effect; `0` disables",
    )
    CHANGE_LOG_RETENTION_HOURS: int = var(24, "change-log rows older than this are pruned hourly")
    REDIS_SOCKET_TIMEOUT_SECONDS: float = var(
        3,
        "longest wait for a Redis reply (blocking commands add their own block time); a hung "
        "Redis is answered with a 503 after this",
    )
    REDIS_CONNECT_TIMEOUT_SECONDS: float = var(2, "longest wait to connect to Redis")
    REDIS_HEALTH_CHECK_SECONDS: int = var(
        15, "a pooled Redis connection idle this long is pinged before reuse"
    )
    REDIS_POOL_MAX_IDLE: int = var(
        32,
        "idle Redis connections a web process keeps after a burst (the rest are closed)",
    )
    # A pooler's connection is the server's for one transaction only: no cursor may outlive it.
    DATABASE_TRANSACTION_POOLING: bool = var(
        False,
        "`true` when `DATABASE_URL` points at PgBouncer in transaction mode: no server-side "
        "cursors (docs/scaling.md)",
    )
    DATABASE_CONNECT_TIMEOUT_SECONDS: int = var(5, "Postgres `connect_timeout`")
    # Server-side, so a stuck query frees its connection.
    DATABASE_STATEMENT_TIMEOUT_MS: int = var(
        30000,
        "Postgres `statement_timeout` for every connection (`0`: none; raise it for long "
        "migrations)",
    )
    # A frozen database fires no server-side timeout.
    MCP_DATABASE_TIMEOUT_SECONDS: float = var(
        10,
        "longest the MCP endpoint waits for one database call before answering 503",
    )


class InspectorVariables(Variables):
    """The live inspector (inspector/)."""

    INSPECTOR_EVENTS_PER_SECOND: int = var(
        10,
        "live-inspector events a web process sends per server and second; the rest are "
        'counted and shown as "not shown"',
    )
    INSPECTOR_SOCKETS_PER_SESSION: int = var(
        10,
        "live-inspector sockets one dashboard session may hold open at once, across every web "
        "process; one more is refused until one closes (a crashed process's sockets stop "
        "counting within 9 s)",
    )
