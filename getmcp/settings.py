"""Settings, all driven by environment variables (documented in README.md)."""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "dev-insecure-secret-key-change-me")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")

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

DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60"))
    )
    if DATABASE_URL
    else {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "var" / "db.sqlite3"}
}
if not DATABASE_URL:
    (BASE_DIR / "var").mkdir(exist_ok=True)
if os.environ.get("TEST_DB_NAME"):
    # Lets several test runs share one Postgres without dropping each other's test database.
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DB_NAME"]}

# Empty means embedded mode: fakeredis in-process, Celery tasks on an in-process executor.
REDIS_URL = os.environ.get("REDIS_URL", "")

# The live inspector's channel layer (inspector/): Redis pub/sub, so an event published by any
# web process reaches a watcher connected to any other; in-process in embedded mode.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
    if REDIS_URL
    else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
}
# At most this many live-inspector events per second, per web process and server; the rest are
# counted ("N requests not shown") so a flood costs a watched server almost nothing.
INSPECTOR_EVENTS_PER_SECOND = int(os.environ.get("INSPECTOR_EVENTS_PER_SECOND", "10"))
# At most this many live-inspector sockets open at once per dashboard session, across every web
# process (counted in Redis); one more is refused (close code 4429) until one closes.
INSPECTOR_SOCKETS_PER_SESSION = int(os.environ.get("INSPECTOR_SOCKETS_PER_SESSION", "10"))

# -- Outages: timeouts and health checks on every Postgres and Redis connection -----------------
# A connection broken by a Postgres restart is noticed (one cheap ping after each idle period)
# and replaced instead of failing requests until the process restarts.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASE_CONNECT_TIMEOUT_SECONDS = int(os.environ.get("DATABASE_CONNECT_TIMEOUT_SECONDS", "5"))
    # Server-side cap on any one statement (0: none), so a stuck query frees its connection.
    DATABASE_STATEMENT_TIMEOUT_MS = int(os.environ.get("DATABASE_STATEMENT_TIMEOUT_MS", "30000"))
    _db_options = DATABASES["default"].setdefault("OPTIONS", {})
    _db_options.setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT_SECONDS)
    if DATABASE_STATEMENT_TIMEOUT_MS:
        _db_options["options"] = (
            f"{_db_options.get('options', '')} -c statement_timeout={DATABASE_STATEMENT_TIMEOUT_MS}"
        ).strip()
# How long the MCP endpoint waits for one database call before answering a clean error (the
# database may be frozen, where no server-side timeout fires).
MCP_DATABASE_TIMEOUT_SECONDS = float(os.environ.get("MCP_DATABASE_TIMEOUT_SECONDS", "10"))
# Redis: each reply (blocking commands get their own block time on top), each connect, and the
# idle time after which a pooled connection is pinged before reuse.
REDIS_SOCKET_TIMEOUT_SECONDS = float(os.environ.get("REDIS_SOCKET_TIMEOUT_SECONDS", "3"))
REDIS_CONNECT_TIMEOUT_SECONDS = float(os.environ.get("REDIS_CONNECT_TIMEOUT_SECONDS", "2"))
REDIS_HEALTH_CHECK_SECONDS = int(os.environ.get("REDIS_HEALTH_CHECK_SECONDS", "15"))
# Revocations, pauses, deletions and definition changes are also recorded in Postgres; each
# process re-reads them this often, so they take effect within this bound even when Redis was
# down when they happened or came back with old data (servers/invalidation.py). 0 disables.
SECURITY_RECHECK_SECONDS = float(os.environ.get("SECURITY_RECHECK_SECONDS", "2"))
# A warm request reads no Redis: each process mirrors the state it checks (generations, sessions,
# inspector flags), told of changes by pub/sub at once and re-reading what it serves at least
# this often, so a change Redis saw is enforced everywhere within this bound even when its
# announcement was lost (gateway/endpoint/mirror.py, docs/scaling.md). 0 turns the mirror off.
MCP_STATE_MAX_STALE_SECONDS = float(os.environ.get("MCP_STATE_MAX_STALE_SECONDS", "1"))
# The mirror keeps re-reading (in the background, batched) every server and key used in this
# window, so a call to any of them finds its state fresh however rarely each is called; at most
# MCP_STATE_MIRROR_SIZE entries of each kind (servers, keys, sessions), least recently used
# dropped first. Sessions are kept only while used within the bound (their re-read refreshes
# their idle expiry).
MCP_STATE_KEEP_SECONDS = float(os.environ.get("MCP_STATE_KEEP_SECONDS", "300"))
MCP_STATE_MIRROR_SIZE = int(os.environ.get("MCP_STATE_MIRROR_SIZE", "20000"))
CHANGE_LOG_RETENTION_HOURS = int(os.environ.get("CHANGE_LOG_RETENTION_HOURS", "24"))

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

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")

# Accounts: invitations and sign-in throttling (issue 8, part B).
# Where the file-based e-mail backend writes messages (EMAIL_BACKEND=...filebased.EmailBackend).
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))
INVITATION_TTL_DAYS = int(os.environ.get("INVITATION_TTL_DAYS", "7"))
# Organizations one person may pay for (accounts/billing.py; 0: no cap). Organizations are free,
# so without a cap every share given per organization could be multiplied.
ORGANIZATIONS_PER_PERSON = int(os.environ.get("ORGANIZATIONS_PER_PERSON", "10"))
# Failed logins allowed per account and per source address in one window; then every login
# for that account (or from that address) is refused, right password or not, until it ends.
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "10"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "50"))
LOGIN_THROTTLE_WINDOW_SECONDS = int(os.environ.get("LOGIN_THROTTLE_WINDOW_SECONDS", "900"))
# Password-reset requests per target address and per source address in one window.
PASSWORD_RESETS_PER_ACCOUNT = int(os.environ.get("PASSWORD_RESETS_PER_ACCOUNT", "3"))
PASSWORD_RESETS_PER_ADDRESS = int(os.environ.get("PASSWORD_RESETS_PER_ADDRESS", "20"))
PASSWORD_RESET_WINDOW_SECONDS = int(os.environ.get("PASSWORD_RESET_WINDOW_SECONDS", "3600"))
# Invitation mail per invited address (from every organization) and per organization.
INVITATIONS_PER_ADDRESS = int(os.environ.get("INVITATIONS_PER_ADDRESS", "5"))
INVITATIONS_PER_ORGANIZATION = int(os.environ.get("INVITATIONS_PER_ORGANIZATION", "50"))
INVITATION_THROTTLE_WINDOW_SECONDS = int(
    os.environ.get("INVITATION_THROTTLE_WINDOW_SECONDS", "86400")
)

# The MCP endpoint.
MCP_MAX_BODY_BYTES = int(os.environ.get("MCP_MAX_BODY_BYTES", str(4 * 1024 * 1024)))
MCP_SESSION_IDLE_SECONDS = int(os.environ.get("MCP_SESSION_IDLE_SECONDS", "3600"))
MCP_SSE_KEEPALIVE_SECONDS = float(os.environ.get("MCP_SSE_KEEPALIVE_SECONDS", "15"))
MCP_CLIENT_REQUEST_TIMEOUT_SECONDS = float(
    os.environ.get("MCP_CLIENT_REQUEST_TIMEOUT_SECONDS", "300")
)
# Per-process caches, least recently used first out: compiled server snapshots (one per server
# and pinned version served), decrypted vault values (per organization, server and live/test),
# and bearer-token digests (known and unknown ones, each up to this many).
SNAPSHOT_CACHE_SIZE = int(os.environ.get("SNAPSHOT_CACHE_SIZE", "2000"))
VAULT_CACHE_SIZE = int(os.environ.get("VAULT_CACHE_SIZE", "2000"))
KEY_CACHE_SIZE = int(os.environ.get("KEY_CACHE_SIZE", "100000"))

# Stateless era: cache hints on list/read results, and the sealed MRTR requestState.
MCP_CACHE_TTL_MS = int(os.environ.get("MCP_CACHE_TTL_MS", "60000"))
MCP_REQUEST_STATE_SECRET = os.environ.get("MCP_REQUEST_STATE_SECRET", SECRET_KEY)
MCP_REQUEST_STATE_TTL_SECONDS = int(os.environ.get("MCP_REQUEST_STATE_TTL_SECONDS", "3600"))
# Origins accepted on every server in addition to same-origin requests.
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS")
# -- Slow clients (slowloris): a request's headers, and then its body, must arrive in time ------
# Headers: enforced by getmcp.http_protocol (uvicorn has no header timeout of its own); the body:
# by the ASGI app, for /mcp/ and Django alike (a 408, or the connection closed).
HTTP_HEADER_TIMEOUT_SECONDS = float(os.environ.get("HTTP_HEADER_TIMEOUT_SECONDS", "10"))
HTTP_BODY_TIMEOUT_SECONDS = float(os.environ.get("HTTP_BODY_TIMEOUT_SECONDS", "30"))

# -- Bounded streams (issue 9): long-lived SSE streams (session GET streams, the old SSE
# transport, subscriptions/listen) open at once; beyond a limit a stream is refused with 429
# (per session, per key) or 503 (per process) and Retry-After. See gateway/endpoint/stream_limits.py.
MCP_STREAMS_PER_SESSION = int(os.environ.get("MCP_STREAMS_PER_SESSION", "8"))
MCP_STREAMS_PER_KEY = int(os.environ.get("MCP_STREAMS_PER_KEY", "100"))
MCP_STREAMS_PER_PROCESS = int(os.environ.get("MCP_STREAMS_PER_PROCESS", "10000"))
# Idle connections a web process keeps in its Redis pool after a burst; the rest are closed.
REDIS_POOL_MAX_IDLE = int(os.environ.get("REDIS_POOL_MAX_IDLE", "32"))

# Secrets at rest: Fernet keys, newest first (older ones still decrypt; see vault/README.md).
SECRETS_KEYS = env_list("SECRETS_KEYS")
# Networks outbound fetches may reach although private (self-hosted upstreams), as CIDRs.
OUTBOUND_ALLOWED_NETWORKS = env_list("OUTBOUND_ALLOWED_NETWORKS")
# Local development: outbound fetches may reach this machine's loopback addresses (127.0.0.0/8,
# ::1), so tools can call upstreams a developer runs beside getmcp. `make run` on a loopback HOST
# turns it on (and says so); never set it where tenants you do not trust define tools.
OUTBOUND_ALLOW_LOOPBACK = env_bool("OUTBOUND_ALLOW_LOOPBACK", False)

# -- Code tools (kind: code): pydantic-monty sandbox workers and per-call limits -------------------
# Sandbox worker subprocesses per web/worker process, and how much lower they are scheduled than
# the process that serves MCP requests (nice), so runaway code never slows anyone's pings.
CODE_SANDBOX_WORKERS = int(os.environ.get("CODE_SANDBOX_WORKERS", "4"))
CODE_SANDBOX_NICE = int(os.environ.get("CODE_SANDBOX_NICE", "10"))
# Workers one organization, and one paying account over all its organizations, may hold at once
# per process (0: all but one), so no tenant starves the others' code tools (code/shares.py).
CODE_SANDBOX_PER_ORG = int(os.environ.get("CODE_SANDBOX_PER_ORG", "0"))
CODE_SANDBOX_PER_OWNER = int(os.environ.get("CODE_SANDBOX_PER_OWNER", "0"))
# Platform maximums: a tool's own `config.limits` may ask for less, never for more.
CODE_MAX_WALL_SECONDS = float(os.environ.get("CODE_MAX_WALL_SECONDS", "60"))
CODE_MAX_CPU_SECONDS = float(os.environ.get("CODE_MAX_CPU_SECONDS", "10"))
CODE_MAX_MEMORY_MB = int(os.environ.get("CODE_MAX_MEMORY_MB", "128"))
CODE_MAX_OUTPUT_BYTES = int(os.environ.get("CODE_MAX_OUTPUT_BYTES", str(1024 * 1024)))
CODE_MAX_HOST_CALLS = int(os.environ.get("CODE_MAX_HOST_CALLS", "200"))
CODE_MAX_CALL_DEPTH = int(os.environ.get("CODE_MAX_CALL_DEPTH", "3"))

# --- OAuth 2.1 authorization server (oauth/) -------------------------------------------------
# The issuer (RFC 8414); SITE_URL unless the authorization server lives elsewhere.
OAUTH_ISSUER = os.environ.get("OAUTH_ISSUER", "").rstrip("/")
OAUTH_ACCESS_TOKEN_SECONDS = int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", "3600"))
OAUTH_REFRESH_TOKEN_SECONDS = int(os.environ.get("OAUTH_REFRESH_TOKEN_SECONDS", str(30 * 86400)))
# A rotated refresh token still works this long (clients that refresh twice at once).
OAUTH_REFRESH_GRACE_SECONDS = int(os.environ.get("OAUTH_REFRESH_GRACE_SECONDS", "30"))
OAUTH_CODE_SECONDS = int(os.environ.get("OAUTH_CODE_SECONDS", "60"))
OAUTH_REGISTRATIONS_PER_MINUTE = int(os.environ.get("OAUTH_REGISTRATIONS_PER_MINUTE", "30"))
OAUTH_UNUSED_CLIENT_HOURS = int(os.environ.get("OAUTH_UNUSED_CLIENT_HOURS", "24"))
OAUTH_CIMD_TIMEOUT_SECONDS = float(os.environ.get("OAUTH_CIMD_TIMEOUT_SECONDS", "5"))
OAUTH_CIMD_MAX_BYTES = int(os.environ.get("OAUTH_CIMD_MAX_BYTES", str(64 * 1024)))
# Tests only: client metadata documents served over http on loopback.
OAUTH_CIMD_ALLOW_HTTP_LOOPBACK = env_bool("OAUTH_CIMD_ALLOW_HTTP_LOOPBACK", False)

# Connector doctor (integrations/doctor): it calls SITE_URL through the SSRF guard. A SITE_URL on
# loopback (a local install) is called as it is; one on a private network only when this is set.
DOCTOR_ALLOW_PRIVATE_SITE = env_bool("DOCTOR_ALLOW_PRIVATE_SITE", False)
# How long the SSE check waits for a stream's first event before blaming a buffering proxy.
DOCTOR_SSE_WAIT_SECONDS = float(os.environ.get("DOCTOR_SSE_WAIT_SECONDS", "5"))

CELERY_BROKER_URL = REDIS_URL or "memory://"
# kombu's Redis transport with the fix that lets a worker survive a Redis restart while it holds
# a message (infra/broker.py, issue 30). Only for redis://: kombu derives a rediss:// URL's TLS
# from the scheme's own name, which naming this class instead would lose.
if REDIS_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "infra.broker:Transport"
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
CALL_LOG_RETENTION_DAYS = int(os.environ.get("CALL_LOG_RETENTION_DAYS", "30"))
# Audit rows older than this are purged (hourly; the chain stays verifiable); 0 keeps them all.
AUDIT_RETENTION_DAYS = int(os.environ.get("AUDIT_RETENTION_DAYS", "365"))
# Keys of the audit chain's HMAC-SHA256, "id:secret" entries, newest first: new rows are MACed
# with the first, every listed one still verifies (rotation: put a new one in front, keep the
# old ones). They never go into the database. Unset: one key derived from SECRET_KEY (HKDF),
# id "sk-<fingerprint>" (docs/audit.md).
AUDIT_MAC_KEYS = env_list("AUDIT_MAC_KEYS")
# Signed checkpoints of every chain's head are written here (a directory the database's holders
# cannot write: another volume or host) every AUDIT_CHECKPOINT_SECONDS; `audit verify` checks
# the chains against the newest one, so deleting the newest rows is noticed. Empty: none kept.
AUDIT_CHECKPOINT_DIR = os.environ.get(
    "AUDIT_CHECKPOINT_DIR", str(BASE_DIR / "var" / "audit-checkpoints")
)
AUDIT_CHECKPOINT_SECONDS = float(os.environ.get("AUDIT_CHECKPOINT_SECONDS", "300"))
CELERY_BEAT_SCHEDULE["checkpoint-audit-log"] = {
    "task": "audit.tasks.checkpoint_audit_log",
    "schedule": AUDIT_CHECKPOINT_SECONDS,
}
# Without a broker the web process runs the whole beat schedule itself (getmcp/embedded_beat.py),
# call-log upkeep included.

# -- Durable call log (issue 9): what a SIGKILL of a web process can lose is bounded by the flush
# interval; an orderly stop (SIGTERM) flushes, retrying Redis for up to the shutdown budget.
CALL_LOG_FLUSH_SECONDS = float(os.environ.get("CALL_LOG_FLUSH_SECONDS", "1.0"))
CALL_LOG_SHUTDOWN_FLUSH_SECONDS = float(os.environ.get("CALL_LOG_SHUTDOWN_FLUSH_SECONDS", "10"))
# Rows waiting in Redis (a long Postgres outage) beyond this cap give way, oldest first.
CALL_LOG_STREAM_MAX_ROWS = int(os.environ.get("CALL_LOG_STREAM_MAX_ROWS", "1000000"))
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
MCP_TASKS_PER_ORG_CONCURRENCY = int(os.environ.get("MCP_TASKS_PER_ORG_CONCURRENCY", "4"))
# Quotas (docs/quotas.md): defaults for organizations, keys and grants that set none; 0 is none.
GOV_DEFAULT_MONTHLY_CALL_QUOTA = int(os.environ.get("GOV_DEFAULT_MONTHLY_CALL_QUOTA", "0"))
GOV_DEFAULT_CALLS_PER_MINUTE = int(os.environ.get("GOV_DEFAULT_CALLS_PER_MINUTE", "0"))

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
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# Distinct server slugs a process labels request counters with; later ones count as "_other".
METRICS_MAX_SERVERS = int(os.environ.get("METRICS_MAX_SERVERS", "200"))
# OpenTelemetry: off unless an OTLP/HTTP endpoint is set (the standard variables).
OTEL_EXPORTER_OTLP_ENDPOINT = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
OTEL_EXPORTER_OTLP_HEADERS = os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", "")
OTEL_SERVICE_NAME = os.environ.get("OTEL_SERVICE_NAME", "getmcp")
# Share of requests without a sampled caller traceparent that are traced (when
# OTEL_TRACES_SAMPLER is unset): a recorded span is not free (docs/observability.md).
TRACES_SAMPLE_RATIO = float(os.environ.get("TRACES_SAMPLE_RATIO", "0.1"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"bounded": {"()": "getmcp.errors.BoundedTracebackFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "bounded"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # One INFO line per outbound request is noise in a server's log.
    "loggers": {
        "httpx2": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},
    },
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)

# Output budgets (gateway/agents/results.py): the characters of whole results one organization
# may keep in Redis at a time behind truncated answers; the oldest are evicted first.
RESULT_STORE_MAX_CHARS_PER_ORG = int(os.environ.get("RESULT_STORE_MAX_CHARS_PER_ORG", "50000000"))
# The same over all the organizations one person pays for (organizations are free to make).
RESULT_STORE_MAX_CHARS_PER_OWNER = int(
    os.environ.get("RESULT_STORE_MAX_CHARS_PER_OWNER", "100000000")
)
