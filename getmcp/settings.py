"""Django settings. What the environment sets is read once, typed, in getmcp/environment/ (its
defaults and meanings too; README.md's table is generated from there); this module turns those
values into Django's settings and holds the fixed ones."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from getmcp.environment import Environment
from infra import redis_sentinel

BASE_DIR = Path(__file__).resolve().parent.parent
ENV = Environment()

DEBUG = ENV.DEBUG
SECRET_KEY = ENV.SECRET_KEY
ALLOWED_HOSTS = ENV.ALLOWED_HOSTS
CSRF_TRUSTED_ORIGINS = ENV.CSRF_TRUSTED_ORIGINS
SITE_URL = ENV.SITE_URL

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "servers",
    "vault",
    "activity",
    "api",
    "dashboard",
    "mcptasks",
    "oauth",
    "inspector",
    "audit",
    "connections",
    "sso",
    "scim",
]

MIDDLEWARE = [
    # Outermost: it rewrites the HTML error pages every other layer can produce into JSON
    # under /api/, and answers a view's unhandled exception there (getmcp/errors.py).
    "getmcp.errors.json_errors",
    # OAuth requests of a server whose live inspector is open go there (one prefix check else).
    "inspector.oauth_watch.OAuthInspectorMiddleware",
    # The OAuth endpoints' failures (an outage included) as JSON OAuth clients read.
    "oauth.outages.OAuthErrorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # An MCP client pointed at a dashboard page is told the /mcp/<slug> URL (before CSRF and
    # the slash redirect, whose answers a client cannot read).
    "dashboard.misdirected.misdirected_mcp",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who acts and from where, for the audit rows the request writes (audit/context.py).
    "audit.context.AuditContextMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.csp.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "getmcp.urls"
ASGI_APPLICATION = "getmcp.asgi.application"
WSGI_APPLICATION = "getmcp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "getmcp.context_processors.background",
            ],
        },
    },
]

DATABASE_URL = ENV.DATABASE_URL
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=ENV.DATABASE_CONN_MAX_AGE)
    if DATABASE_URL
    else {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "var" / "db.sqlite3"}
}
if not DATABASE_URL:
    (BASE_DIR / "var").mkdir(exist_ok=True)
if ENV.TEST_DB_NAME:
    # Lets several test runs share one Postgres without dropping each other's test database.
    DATABASES["default"]["TEST"] = {"NAME": ENV.TEST_DB_NAME}

# Empty means embedded mode: fakeredis in-process, Celery tasks on an in-process executor.
REDIS_URL = ENV.REDIS_URL
# REDIS_URL names one node of a Redis Cluster: infra/redis.py builds redis-py's cluster clients,
# and pub/sub is sharded (docs/scaling.md, "Redis Cluster").
REDIS_CLUSTER = ENV.REDIS_CLUSTER
# REDIS_URL may be `sentinel://...`: the master of that name, wherever its Sentinels say it is
# (infra/redis_sentinel.py, docs/scaling.md "Sentinel").
REDIS_SENTINEL_MASTER = ENV.REDIS_SENTINEL_MASTER
# How long a command that meets a dead master keeps retrying, waiting for the Sentinels to
# promote a replica (infra/redis_failover.py; the default's reasons in getmcp/environment/site.py).
REDIS_SENTINEL_FAILOVER_SECONDS = ENV.REDIS_SENTINEL_FAILOVER_SECONDS
if redis_sentinel.is_sentinel_url(REDIS_URL):
    if REDIS_CLUSTER:
        raise ImproperlyConfigured("REDIS_CLUSTER takes cluster nodes, not a sentinel:// URL")
    if not REDIS_SENTINEL_MASTER:
        raise ImproperlyConfigured("a sentinel:// REDIS_URL needs REDIS_SENTINEL_MASTER")
    redis_sentinel.parse(REDIS_URL)  # a malformed URL stops the start, not the first request
# The Channels layer (the live inspector's events) may live on a Redis of its own; channels_redis
# speaks no cluster protocol, so under REDIS_CLUSTER it needs one.
CHANNELS_REDIS_URL = ENV.CHANNELS_REDIS_URL or REDIS_URL
if REDIS_CLUSTER and not ENV.CHANNELS_REDIS_URL:
    raise ImproperlyConfigured("REDIS_CLUSTER needs CHANNELS_REDIS_URL (a standalone Redis)")


def _channels_host(url: str) -> str | dict:
    """channels_redis takes a URL, or for a Sentinel-watched master the Sentinels' addresses
    and the master's name (it builds redis-py's Sentinel pool from them)."""
    if not redis_sentinel.is_sentinel_url(url):
        return url
    if not REDIS_SENTINEL_MASTER:
        raise ImproperlyConfigured("a sentinel:// CHANNELS_REDIS_URL needs REDIS_SENTINEL_MASTER")
    target = redis_sentinel.parse(url)
    return {
        "sentinels": target.sentinels,
        "master_name": REDIS_SENTINEL_MASTER,
        **target.master_options(),
    }


# The live inspector's channel layer (inspector/): Redis pub/sub, so an event published by any
# web process reaches a watcher connected to any other; in-process in embedded mode.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [_channels_host(CHANNELS_REDIS_URL)]},
    }
    if CHANNELS_REDIS_URL
    else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
}
# At most this many live-inspector events per second, per web process and server; the rest are
# counted ("N requests not shown") so a flood costs a watched server almost nothing.
INSPECTOR_EVENTS_PER_SECOND = ENV.INSPECTOR_EVENTS_PER_SECOND
# At most this many live-inspector sockets open at once per dashboard session, across every web
# process (counted in Redis); one more is refused (close code 4429) until one closes.
INSPECTOR_SOCKETS_PER_SESSION = ENV.INSPECTOR_SOCKETS_PER_SESSION

# -- Outages: timeouts and health checks on every Postgres and Redis connection -----------------
# A connection broken by a Postgres restart is noticed (one cheap ping after each idle period)
# and replaced instead of failing requests until the process restarts.
# Behind PgBouncer in transaction mode a connection is the server's only for one transaction:
# no cursor may outlive it, so QuerySet.iterator() fetches in chunks on the client instead of
# through a server-side (WITH HOLD) cursor. Prepared statements are never used (psycopg's
# client-side binding, Django's default) and advisory locks are transaction-level.
DATABASE_TRANSACTION_POOLING = ENV.DATABASE_TRANSACTION_POOLING
if DATABASE_TRANSACTION_POOLING:
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASE_CONNECT_TIMEOUT_SECONDS = ENV.DATABASE_CONNECT_TIMEOUT_SECONDS
    # Server-side cap on any one statement (0: none), so a stuck query frees its connection.
    DATABASE_STATEMENT_TIMEOUT_MS = ENV.DATABASE_STATEMENT_TIMEOUT_MS
    _db_options = DATABASES["default"].setdefault("OPTIONS", {})
    _db_options.setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT_SECONDS)
    # A pooler takes no startup `options`: behind one, set statement_timeout on the database
    # role instead (docs/scaling.md, "PgBouncer").
    if DATABASE_STATEMENT_TIMEOUT_MS and not DATABASE_TRANSACTION_POOLING:
        _db_options["options"] = (
            f"{_db_options.get('options', '')} -c statement_timeout={DATABASE_STATEMENT_TIMEOUT_MS}"
        ).strip()
# How long the MCP endpoint waits for one database call before answering a clean error (the
# database may be frozen, where no server-side timeout fires).
MCP_DATABASE_TIMEOUT_SECONDS = ENV.MCP_DATABASE_TIMEOUT_SECONDS
# Redis: each reply (blocking commands get their own block time on top), each connect, and the
# idle time after which a pooled connection is pinged before reuse.
REDIS_SOCKET_TIMEOUT_SECONDS = ENV.REDIS_SOCKET_TIMEOUT_SECONDS
REDIS_CONNECT_TIMEOUT_SECONDS = ENV.REDIS_CONNECT_TIMEOUT_SECONDS
REDIS_HEALTH_CHECK_SECONDS = ENV.REDIS_HEALTH_CHECK_SECONDS
# Revocations, pauses, deletions and definition changes are also recorded in Postgres; each
# process re-reads them this often, so they take effect within this bound even when Redis was
# down when they happened or came back with old data (servers/invalidation.py). 0 disables.
SECURITY_RECHECK_SECONDS = ENV.SECURITY_RECHECK_SECONDS
# A warm request reads no Redis: each process mirrors the state it checks (generations, sessions,
# inspector flags), told of changes by pub/sub at once and re-reading what it serves at least
# this often, so a change Redis saw is enforced everywhere within this bound even when its
# announcement was lost (gateway/pipeline/mirror.py, docs/scaling.md). 0 turns the mirror off.
MCP_STATE_MAX_STALE_SECONDS = ENV.MCP_STATE_MAX_STALE_SECONDS
# The mirror keeps re-reading (in the background, batched) every server and key used in this
# window, so a call to any of them finds its state fresh however rarely each is called; at most
# MCP_STATE_MIRROR_SIZE entries of each kind (servers, keys, sessions), least recently used
# dropped first. Sessions are kept only while used within the bound (their re-read refreshes
# their idle expiry).
MCP_STATE_KEEP_SECONDS = ENV.MCP_STATE_KEEP_SECONDS
MCP_STATE_MIRROR_SIZE = ENV.MCP_STATE_MIRROR_SIZE
CHANGE_LOG_RETENTION_HOURS = ENV.CHANGE_LOG_RETENTION_HOURS

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

EMAIL_BACKEND = ENV.EMAIL_BACKEND

# Accounts: invitations and sign-in throttling (issue 8, part B).
# Where the file-based e-mail backend writes messages (EMAIL_BACKEND=...filebased.EmailBackend).
EMAIL_FILE_PATH = ENV.EMAIL_FILE_PATH
INVITATION_TTL_DAYS = ENV.INVITATION_TTL_DAYS
# Organizations one person may pay for (accounts/billing.py; 0: no cap). Organizations are free,
# so without a cap every share given per organization could be multiplied.
ORGANIZATIONS_PER_PERSON = ENV.ORGANIZATIONS_PER_PERSON
# Failed logins allowed per account and per source address in one window; then every login
# for that account (or from that address) is refused, right password or not, until it ends.
LOGIN_FAILURES_PER_ACCOUNT = ENV.LOGIN_FAILURES_PER_ACCOUNT
LOGIN_FAILURES_PER_ADDRESS = ENV.LOGIN_FAILURES_PER_ADDRESS
LOGIN_THROTTLE_WINDOW_SECONDS = ENV.LOGIN_THROTTLE_WINDOW_SECONDS
# Password-reset requests per target address and per source address in one window.
PASSWORD_RESETS_PER_ACCOUNT = ENV.PASSWORD_RESETS_PER_ACCOUNT
PASSWORD_RESETS_PER_ADDRESS = ENV.PASSWORD_RESETS_PER_ADDRESS
PASSWORD_RESET_WINDOW_SECONDS = ENV.PASSWORD_RESET_WINDOW_SECONDS
# Invitation mail per invited address (from every organization) and per organization.
INVITATIONS_PER_ADDRESS = ENV.INVITATIONS_PER_ADDRESS
INVITATIONS_PER_ORGANIZATION = ENV.INVITATIONS_PER_ORGANIZATION
INVITATION_THROTTLE_WINDOW_SECONDS = ENV.INVITATION_THROTTLE_WINDOW_SECONDS

# The MCP endpoint.
MCP_MAX_BODY_BYTES = ENV.MCP_MAX_BODY_BYTES
MCP_SESSION_IDLE_SECONDS = ENV.MCP_SESSION_IDLE_SECONDS
MCP_SSE_KEEPALIVE_SECONDS = ENV.MCP_SSE_KEEPALIVE_SECONDS
MCP_CLIENT_REQUEST_TIMEOUT_SECONDS = ENV.MCP_CLIENT_REQUEST_TIMEOUT_SECONDS
# Per-process caches, least recently used first out: compiled server snapshots (one per server
# and pinned version served), decrypted vault values (per organization, server and live/test),
# and bearer-token digests (known and unknown ones, each up to this many).
SNAPSHOT_CACHE_SIZE = ENV.SNAPSHOT_CACHE_SIZE
VAULT_CACHE_SIZE = ENV.VAULT_CACHE_SIZE
KEY_CACHE_SIZE = ENV.KEY_CACHE_SIZE
# Discovery's tool search fuses BM25 with sentence embeddings (servers/discovery/embedding.py):
# about 180 MB more in each process that loads the model. False: BM25 alone, no model loaded.
DISCOVERY_SEMANTIC_SEARCH = ENV.DISCOVERY_SEMANTIC_SEARCH

# Stateless era: cache hints on list/read results, and the sealed MRTR requestState.
MCP_CACHE_TTL_MS = ENV.MCP_CACHE_TTL_MS
MCP_REQUEST_STATE_SECRET = ENV.MCP_REQUEST_STATE_SECRET or SECRET_KEY
MCP_REQUEST_STATE_TTL_SECONDS = ENV.MCP_REQUEST_STATE_TTL_SECONDS
# Origins accepted on every server in addition to same-origin requests.
MCP_ALLOWED_ORIGINS = ENV.MCP_ALLOWED_ORIGINS
# -- Slow clients (slowloris): a request's headers, and then its body, must arrive in time ------
# Headers: enforced by getmcp.http_protocol (uvicorn has no header timeout of its own); the body:
# by the ASGI app, for /mcp/ and Django alike (a 408, or the connection closed).
HTTP_HEADER_TIMEOUT_SECONDS = ENV.HTTP_HEADER_TIMEOUT_SECONDS
HTTP_BODY_TIMEOUT_SECONDS = ENV.HTTP_BODY_TIMEOUT_SECONDS

# -- Bounded streams (issue 9): long-lived SSE streams (session GET streams, the old SSE
# transport, subscriptions/listen) open at once; beyond a limit a stream is refused with 429
# (per session, per key) or 503 (per process) and Retry-After. See gateway/endpoint/stream_limits.py.
MCP_STREAMS_PER_SESSION = ENV.MCP_STREAMS_PER_SESSION
MCP_STREAMS_PER_KEY = ENV.MCP_STREAMS_PER_KEY
MCP_STREAMS_PER_PROCESS = ENV.MCP_STREAMS_PER_PROCESS
# Idle connections a web process keeps in its Redis pool after a burst; the rest are closed.
REDIS_POOL_MAX_IDLE = ENV.REDIS_POOL_MAX_IDLE

# Secrets at rest: Fernet keys, newest first (older ones still decrypt; see vault/README.md).
SECRETS_KEYS = ENV.SECRETS_KEYS
# Networks outbound fetches may reach although private (self-hosted upstreams), as CIDRs.
OUTBOUND_ALLOWED_NETWORKS = ENV.OUTBOUND_ALLOWED_NETWORKS
# Local development: outbound fetches may reach this machine's loopback addresses (127.0.0.0/8,
# ::1), so tools can call upstreams a developer runs beside getmcp. `make run` on a loopback HOST
# turns it on (and says so); never set it where tenants you do not trust define tools.
OUTBOUND_ALLOW_LOOPBACK = ENV.OUTBOUND_ALLOW_LOOPBACK

# -- Code tools (kind: code): pydantic-monty sandbox workers and per-call limits -------------------
# Sandbox worker subprocesses per web/worker process, and how much lower they are scheduled than
# the process that serves MCP requests (nice), so runaway code never slows anyone's pings.
CODE_SANDBOX_WORKERS = ENV.CODE_SANDBOX_WORKERS
CODE_SANDBOX_NICE = ENV.CODE_SANDBOX_NICE
# Workers one organization, and one paying account over all its organizations, may hold at once
# per process (0: all but one), so no tenant starves the others' code tools (code/shares.py).
CODE_SANDBOX_PER_ORG = ENV.CODE_SANDBOX_PER_ORG
CODE_SANDBOX_PER_OWNER = ENV.CODE_SANDBOX_PER_OWNER
# Platform maximums: a tool's own `config.limits` may ask for less, never for more.
CODE_MAX_WALL_SECONDS = ENV.CODE_MAX_WALL_SECONDS
CODE_MAX_CPU_SECONDS = ENV.CODE_MAX_CPU_SECONDS
CODE_MAX_MEMORY_MB = ENV.CODE_MAX_MEMORY_MB
CODE_MAX_OUTPUT_BYTES = ENV.CODE_MAX_OUTPUT_BYTES
CODE_MAX_HOST_CALLS = ENV.CODE_MAX_HOST_CALLS
CODE_MAX_CALL_DEPTH = ENV.CODE_MAX_CALL_DEPTH

# --- OAuth 2.1 authorization server (oauth/) -------------------------------------------------
# The issuer (RFC 8414); SITE_URL unless the authorization server lives elsewhere.
OAUTH_ISSUER = ENV.OAUTH_ISSUER
OAUTH_ACCESS_TOKEN_SECONDS = ENV.OAUTH_ACCESS_TOKEN_SECONDS
OAUTH_REFRESH_TOKEN_SECONDS = ENV.OAUTH_REFRESH_TOKEN_SECONDS
# A rotated refresh token still works this long (clients that refresh twice at once).
OAUTH_REFRESH_GRACE_SECONDS = ENV.OAUTH_REFRESH_GRACE_SECONDS
OAUTH_CODE_SECONDS = ENV.OAUTH_CODE_SECONDS
OAUTH_REGISTRATIONS_PER_MINUTE = ENV.OAUTH_REGISTRATIONS_PER_MINUTE
OAUTH_UNUSED_CLIENT_HOURS = ENV.OAUTH_UNUSED_CLIENT_HOURS
OAUTH_CIMD_TIMEOUT_SECONDS = ENV.OAUTH_CIMD_TIMEOUT_SECONDS
OAUTH_CIMD_MAX_BYTES = ENV.OAUTH_CIMD_MAX_BYTES
# Tests only: client metadata documents served over http on loopback.
OAUTH_CIMD_ALLOW_HTTP_LOOPBACK = ENV.OAUTH_CIMD_ALLOW_HTTP_LOOPBACK
# Enterprise-managed authorization (ID-JAG) and client assertions (oauth/assertions.py).
OAUTH_JWKS_CACHE_SECONDS = ENV.OAUTH_JWKS_CACHE_SECONDS
# Tests only: a trusted identity provider's JWKS served over http on loopback.
OAUTH_JWKS_ALLOW_HTTP_LOOPBACK = ENV.OAUTH_JWKS_ALLOW_HTTP_LOOPBACK
OAUTH_ASSERTION_SKEW_SECONDS = ENV.OAUTH_ASSERTION_SKEW_SECONDS
OAUTH_ASSERTION_MAX_SECONDS = ENV.OAUTH_ASSERTION_MAX_SECONDS

# Connector doctor (integrations/doctor): it calls SITE_URL through the SSRF guard. A SITE_URL on
# loopback (a local install) is called as it is; one on a private network only when this is set.
DOCTOR_ALLOW_PRIVATE_SITE = ENV.DOCTOR_ALLOW_PRIVATE_SITE
# How long the SSE check waits for a stream's first event before blaming a buffering proxy.
DOCTOR_SSE_WAIT_SECONDS = ENV.DOCTOR_SSE_WAIT_SECONDS

# The broker may be a service of its own (RabbitMQ, a Sentinel-watched Redis): tasks are messages
# only, the platform's state never goes through it. Embedded mode (no REDIS_URL) keeps tasks in
# the process whatever this says.
CELERY_BROKER_URL = (ENV.CELERY_BROKER_URL or REDIS_URL) if REDIS_URL else "memory://"
if REDIS_CLUSTER and not ENV.CELERY_BROKER_URL:
    # kombu's Redis transport keeps its queues in keys of unrelated slots: no cluster.
    raise ImproperlyConfigured("REDIS_CLUSTER needs CELERY_BROKER_URL (RabbitMQ, or a Redis)")
# kombu's Redis transport with the fix that lets a worker survive a Redis restart while it holds
# a message (infra/broker.py, issue 30). Only for redis://: kombu derives a rediss:// URL's TLS
# from the scheme's own name, which naming this class instead would lose; amqp:// keeps kombu's
# own transport.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "infra.broker:Transport"
# A broker left to default to a sentinel:// REDIS_URL goes to the same master.
CELERY_BROKER_SENTINEL_MASTER = ENV.CELERY_BROKER_SENTINEL_MASTER or REDIS_SENTINEL_MASTER
if CELERY_BROKER_URL.startswith("sentinel://"):
    # kombu's Sentinel transport with the same fix (a master killed under a worker).
    CELERY_BROKER_TRANSPORT = "infra.broker:SentinelTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "master_name": CELERY_BROKER_SENTINEL_MASTER,
        # A hung master or Sentinel costs a publish no more than the state clients wait.
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_SECONDS,
        "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
    }
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_IMPORTS = ["servers.upstream.tasks"]
CELERY_BEAT_SCHEDULE = {
    "flush-api-key-usage": {"task": "accounts.tasks.flush_key_usage", "schedule": 60.0},
    "refresh-upstream-tools": {
        "task": "servers.upstream.tasks.refresh_all_upstreams",
        "schedule": 300.0,
    },
    "reap-mcp-tasks": {"task": "mcptasks.reap_tasks", "schedule": 30.0},
    "drain-call-log": {"task": "activity.tasks.drain_call_log", "schedule": 5.0},
    "purge-call-log": {"task": "activity.tasks.purge_call_log", "schedule": 3600.0},
    "prune-change-log": {"task": "servers.tasks.prune_change_log", "schedule": 3600.0},
    "oauth-collect-unused-clients": {
        "task": "oauth.tasks.collect_unused_clients",
        "schedule": 3600.0,
    },
    "purge-audit-log": {"task": "audit.tasks.purge_audit_log", "schedule": 3600.0},
    "oauth-flush-grant-usage": {"task": "oauth.tasks.flush_grant_usage", "schedule": 60.0},
    "oauth-forget-refresh-successors": {
        "task": "oauth.tasks.forget_refresh_successors",
        "schedule": 60.0,
    },
}
CALL_LOG_RETENTION_DAYS = ENV.CALL_LOG_RETENTION_DAYS
# Audit rows older than this are purged (hourly; the chain stays verifiable); 0 keeps them all.
AUDIT_RETENTION_DAYS = ENV.AUDIT_RETENTION_DAYS
# Keys of the audit chain's HMAC-SHA256, "id:secret" entries, newest first: new rows are MACed
# with the first, every listed one still verifies (rotation: put a new one in front, keep the
# old ones). They never go into the database. Unset: one key derived from SECRET_KEY (HKDF),
# id "sk-<fingerprint>" (docs/audit.md).
AUDIT_MAC_KEYS = ENV.AUDIT_MAC_KEYS
# Signed checkpoints of every chain's head are written here (a directory the database's holders
# cannot write: another volume or host) every AUDIT_CHECKPOINT_SECONDS; `audit verify` checks
# the chains against the newest one, so deleting the newest rows is noticed. Empty: none kept.
AUDIT_CHECKPOINT_DIR = ENV.AUDIT_CHECKPOINT_DIR
AUDIT_CHECKPOINT_SECONDS = ENV.AUDIT_CHECKPOINT_SECONDS
CELERY_BEAT_SCHEDULE["checkpoint-audit-log"] = {
    "task": "audit.tasks.checkpoint_audit_log",
    "schedule": AUDIT_CHECKPOINT_SECONDS,
}
# Without a broker the web process runs the whole beat schedule itself (getmcp/embedded_beat.py),
# call-log upkeep included.

# -- Durable call log (issue 9): what a SIGKILL of a web process can lose is bounded by the flush
# interval; an orderly stop (SIGTERM) flushes, retrying Redis for up to the shutdown budget.
CALL_LOG_FLUSH_SECONDS = ENV.CALL_LOG_FLUSH_SECONDS
CALL_LOG_SHUTDOWN_FLUSH_SECONDS = ENV.CALL_LOG_SHUTDOWN_FLUSH_SECONDS
# Rows waiting in Redis (a long Postgres outage) beyond this cap give way, oldest first.
CALL_LOG_STREAM_MAX_ROWS = ENV.CALL_LOG_STREAM_MAX_ROWS
# A worker that dies must not take tasks it never started down with it.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Background liveness (getmcp/heartbeat.py): beat writes a timestamp on its ticks, so the
# dashboard can say when it is not running.
CELERY_BEAT_SCHEDULER = "getmcp.heartbeat:BeatScheduler"

# -- Fair, separate queues (issue 9): platform jobs (beat schedule, refreshes) on `platform`,
# tenants' MCP tasks on `mcp`, so a burst of long tasks cannot delay the platform's own jobs.
# Run a worker per queue in production (`make worker-platform`, `make worker-mcp`).
# A worker started without -Q consumes every queue declared here (the dev default).
CELERY_TASK_DEFAULT_QUEUE = "platform"
MCP_TASK_QUEUE = "mcp"
CELERY_TASK_QUEUES = {
    name: {"exchange": name, "routing_key": name} for name in ("platform", MCP_TASK_QUEUE)
}
CELERY_TASK_ROUTES = {"mcptasks.run_tool": {"queue": MCP_TASK_QUEUE}}
# A scheduled job not started within its own interval is dropped (the next one is on its way)
# rather than run late in a pile-up behind a stopped or overloaded platform worker.
for _entry in CELERY_BEAT_SCHEDULE.values():
    _entry.setdefault("options", {}).setdefault("expires", float(_entry["schedule"]))
# Tasks of one organization running at once; the rest wait their turn (mcptasks/fairness.py).
MCP_TASKS_PER_ORG_CONCURRENCY = ENV.MCP_TASKS_PER_ORG_CONCURRENCY
# The task runner's timing (mcptasks/): fixed, not read from the environment (tests shorten them).
# A running task's heartbeat interval; a run whose heartbeat is older than the stale bound is
# taken for dead; a dispatched task no run claimed within the patience is dispatched again.
MCP_TASK_HEARTBEAT_SECONDS = 5.0
MCP_TASK_STALE_SECONDS = 30.0
MCP_TASK_QUEUE_PATIENCE_SECONDS = 300.0
MCP_TASK_MAX_ATTEMPTS = 2
# Threads running tasks in embedded mode (no broker), and the pollInterval clients are told.
MCP_TASK_EMBEDDED_THREADS = 4
MCP_TASK_POLL_INTERVAL_MS = 500
# Quotas (docs/quotas.md): defaults for organizations, keys and grants that set none; 0 is none.
GOV_DEFAULT_MONTHLY_CALL_QUOTA = ENV.GOV_DEFAULT_MONTHLY_CALL_QUOTA
GOV_DEFAULT_CALLS_PER_MINUTE = ENV.GOV_DEFAULT_CALLS_PER_MINUTE

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
# /api/docs/ runs the Swagger UI that drf-spectacular-sidecar ships (pinned in the lock files),
# served from this site's /static/: no CDN, so the page works offline and loads no third party.
SPECTACULAR_SETTINGS = {
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# -- Metrics and traces (issue 13; docs/observability.md) -------------------------------------
# GET /metrics answers (Prometheus text) only with `Authorization: Bearer METRICS_TOKEN`; without
# the setting, or with another token, it is a 404 like any unknown path.
METRICS_TOKEN = ENV.METRICS_TOKEN
# Distinct server slugs a process labels request counters with; later ones count as "_other".
METRICS_MAX_SERVERS = ENV.METRICS_MAX_SERVERS
# OpenTelemetry: off unless an OTLP/HTTP endpoint is set (the standard variables).
OTEL_EXPORTER_OTLP_ENDPOINT = ENV.OTEL_EXPORTER_OTLP_ENDPOINT
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = ENV.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
OTEL_EXPORTER_OTLP_HEADERS = ENV.OTEL_EXPORTER_OTLP_HEADERS
OTEL_SERVICE_NAME = ENV.OTEL_SERVICE_NAME
# Share of requests without a sampled caller traceparent that are traced (when
# OTEL_TRACES_SAMPLER is unset): a recorded span is not free (docs/observability.md).
TRACES_SAMPLE_RATIO = ENV.TRACES_SAMPLE_RATIO
# Set: OpenTelemetry's SDK samples by its own standard variables instead.
OTEL_TRACES_SAMPLER = ENV.OTEL_TRACES_SAMPLER

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"bounded": {"()": "getmcp.errors.BoundedTracebackFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "bounded"}},
    "root": {"handlers": ["console"], "level": ENV.LOG_LEVEL},
    # One INFO line per outbound request is noise in a server's log.
    "loggers": {
        "httpx2": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},
    },
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_SECURE = ENV.SECURE_COOKIES
    CSRF_COOKIE_SECURE = ENV.SECURE_COOKIES

# Output budgets (gateway/agents/results.py): the characters of whole results one organization
# may keep in Redis at a time behind truncated answers; the oldest are evicted first.
RESULT_STORE_MAX_CHARS_PER_ORG = ENV.RESULT_STORE_MAX_CHARS_PER_ORG
# The same over all the organizations one person pays for (organizations are free to make).
RESULT_STORE_MAX_CHARS_PER_OWNER = ENV.RESULT_STORE_MAX_CHARS_PER_OWNER
