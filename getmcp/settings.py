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
    "accounts",
    "servers",
    "vault",
    "activity",
    "api",
    "mcptasks",
    "oauth",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "servers.dashboard.csp.ContentSecurityPolicyMiddleware",
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
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)
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

# The MCP endpoint.
MCP_MAX_BODY_BYTES = int(os.environ.get("MCP_MAX_BODY_BYTES", str(4 * 1024 * 1024)))
MCP_SESSION_IDLE_SECONDS = int(os.environ.get("MCP_SESSION_IDLE_SECONDS", "3600"))
MCP_SSE_KEEPALIVE_SECONDS = float(os.environ.get("MCP_SSE_KEEPALIVE_SECONDS", "15"))
MCP_CLIENT_REQUEST_TIMEOUT_SECONDS = float(
    os.environ.get("MCP_CLIENT_REQUEST_TIMEOUT_SECONDS", "300")
)
# Stateless era: cache hints on list/read results, and the sealed MRTR requestState.
MCP_CACHE_TTL_MS = int(os.environ.get("MCP_CACHE_TTL_MS", "60000"))
MCP_REQUEST_STATE_SECRET = os.environ.get("MCP_REQUEST_STATE_SECRET", SECRET_KEY)
MCP_REQUEST_STATE_TTL_SECONDS = int(os.environ.get("MCP_REQUEST_STATE_TTL_SECONDS", "3600"))
# Origins accepted on every server in addition to same-origin requests.
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS")

# Secrets at rest: Fernet keys, newest first (older ones still decrypt; see vault/README.md).
SECRETS_KEYS = env_list("SECRETS_KEYS")
# Networks outbound fetches may reach although private (self-hosted upstreams), as CIDRs.
OUTBOUND_ALLOWED_NETWORKS = env_list("OUTBOUND_ALLOWED_NETWORKS")

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

CELERY_BROKER_URL = REDIS_URL or "memory://"
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
    "oauth-collect-unused-clients": {
        "task": "oauth.tasks.collect_unused_clients",
        "schedule": 3600.0,
    },
    "oauth-flush-grant-usage": {"task": "oauth.tasks.flush_grant_usage", "schedule": 60.0},
}
CALL_LOG_RETENTION_DAYS = int(os.environ.get("CALL_LOG_RETENTION_DAYS", "30"))
# Without a broker the web process runs the whole beat schedule itself (getmcp/embedded_beat.py),
# call-log upkeep included.
CALL_LOG_DRAIN_IN_PROCESS = False
# A worker that dies must not take tasks it never started down with it.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.errors.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # One INFO line per outbound request is noise in a server's log.
    "loggers": {
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},
    },
}

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
