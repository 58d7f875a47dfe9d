"""The site, its accounts and its OAuth authorization server."""

from .parsing import BASE_DIR, Variables, issuer, var


class SiteVariables(Variables):
    """Site and security."""

    DATABASE_URL: str = var(
        "",
        "Postgres URL, e.g. `postgres://user:pass@host:5432/getmcp`",
        shown="unset: SQLite in `var/`",
    )
    DATABASE_CONN_MAX_AGE: int = var(
        60,
        "seconds a Postgres connection is kept for reuse (Django's `CONN_MAX_AGE`)",
        # An ASGI web process keeps none: each Django request runs in a thread of its own.
        shown="`60`; `0` in the ASGI web process (`getmcp/environment/startup.py`)",
    )
    REDIS_URL: str = var(
        "",
        "Redis for the platform's state: sessions, streams, the state mirror's channel, "
        "counters, the call log's buffer (and, unless set apart below, the Celery broker and "
        "the Channels layer); a Redis Cluster when `REDIS_CLUSTER` is on; a Sentinel-watched "
        "Redis as `sentinel://:pass@host1:26379;sentinel://host2:26379/0` with "
        "`REDIS_SENTINEL_MASTER` ([docs/scaling.md](docs/scaling.md))",
        shown="unset: in-process fakeredis",
    )
    REDIS_CLUSTER: bool = var(
        False,
        "`REDIS_URL` names nodes of a Redis Cluster (7+; one or several, comma-separated: "
        "`redis://10.0.0.1:6379,10.0.0.2:6379/0`): the platform's state goes through "
        "redis-py's cluster client, pub/sub is sharded; needs `CELERY_BROKER_URL` and "
        "`CHANNELS_REDIS_URL`",
    )
    REDIS_SENTINEL_MASTER: str = var(
        "",
        "the master's name the Sentinels of a `sentinel://` `REDIS_URL` know (required with "
        "one); clients follow its failover. Also the broker's and Channels layer's master "
        "when they default to `REDIS_URL`",
        shown="unset",
    )
    # A Sentinel fails over after `down-after-milliseconds` plus an election and the promotion
    # (1.3 s more with 1000 ms in tests/scale/test_redis_sentinel.py, more on a loaded network).
    # 10 s covers the common 5000 ms with as much again for a slow election; it is the
    # endpoint's other outage bound too (MCP_DATABASE_TIMEOUT_SECONDS), well inside what MCP
    # clients and proxies wait for an answer (30-60 s). Longer only makes a Redis that is gone
    # for good (no failover coming) answer its 503 later: every command first spends it all.
    REDIS_SENTINEL_FAILOVER_SECONDS: float = var(
        10,
        "how long a command on a Sentinel-watched master (`sentinel://` `REDIS_URL`) retries "
        "connection errors, waiting for a failover (and a task's publish to a `sentinel://` "
        "broker): at least the Sentinels' "
        "`down-after-milliseconds` plus a few seconds for the election (Redis's own default "
        "of 30000 ms needs about 35); a master down with no failover is answered with a 503 "
        "after it",
    )
    CELERY_BROKER_URL: str = var(
        "",
        "the Celery broker, when not `REDIS_URL`: `redis://`, Redis Sentinel "
        "(`sentinel://host1:26379;sentinel://host2:26379`, with `CELERY_BROKER_SENTINEL_MASTER`) "
        "or RabbitMQ (`amqp://user:pass@host:5672/vhost`)",
        shown="unset: `REDIS_URL`",
    )
    CELERY_BROKER_SENTINEL_MASTER: str = var(
        "",
        "the master's name the Sentinels of a `sentinel://` broker know",
        shown="unset: `REDIS_SENTINEL_MASTER`",
    )
    CHANNELS_REDIS_URL: str = var(
        "",
        "Redis for the live inspector's Channels layer, when not `REDIS_URL` (a standalone "
        "Redis, or `sentinel://` with `REDIS_SENTINEL_MASTER`: channels_redis speaks no "
        "cluster protocol)",
        shown="unset: `REDIS_URL`",
    )
    SECRET_KEY: str = var(
        "dev-insecure-secret-key-change-me",
        "Django's secret key; set it in any deployment",
        shown="an insecure development key",
    )
    DEBUG: bool = var(False, "Django debug mode")
    ALLOWED_HOSTS: list[str] = var(
        ["localhost", "127.0.0.1", "[::1]"], "comma-separated host names the site answers to"
    )
    CSRF_TRUSTED_ORIGINS: list[str] = var(
        [], "comma-separated origins trusted for form posts (behind a proxy)"
    )
    SITE_URL: str = var(
        "http://127.0.0.1:8000",
        "the public base URL, used in printed endpoint URLs and links",
        shown="`http://127.0.0.1:8000`; under `make run`, `http://$HOST:$PORT`",
    )
    SECURE_COOKIES: bool = var(False, "mark session and CSRF cookies Secure (set it behind HTTPS)")
    LOG_LEVEL: str = var("INFO", "root log level")
    TEST_DB_NAME: str = var(
        "",
        "name of the test database `pytest` creates (lets several test runs share one Postgres)",
        shown="unset",
        deployed=False,
    )
    EMAIL_BACKEND: str = var(
        "django.core.mail.backends.console.EmailBackend",
        "Django e-mail backend (password resets, invitations)",
        shown="console backend",
    )
    EMAIL_FILE_PATH: str = var(
        str(BASE_DIR / "var" / "mail"),
        "directory the file-based e-mail backend writes to",
        shown="`var/mail`",
    )
    SECRETS_KEYS: list[str] = var(
        [],
        "comma-separated Fernet keys for secrets at rest, newest first (see "
        "[vault/README.md](vault/README.md)); set it in production, or changing `SECRET_KEY` "
        "makes stored secrets unreadable",
        shown="unset: derived from `SECRET_KEY`",
    )


class AccountVariables(Variables):
    """Accounts: invitations, organizations, sign-in throttling."""

    INVITATION_TTL_DAYS: int = var(
        7, "days an organization invitation link stays valid (it works once)"
    )
    # Organizations are free, so without a cap every share given per organization multiplies.
    ORGANIZATIONS_PER_PERSON: int = var(
        10,
        "organizations one person may pay for (create, or take over as the paying owner); "
        "`0`: no cap",
    )
    LOGIN_FAILURES_PER_ACCOUNT: int = var(
        10,
        "failed logins per account before every login to it is refused (right password or "
        "not) until the window ends",
    )
    LOGIN_FAILURES_PER_ADDRESS: int = var(
        50, "failed logins per source address before its logins are refused until the window ends"
    )
    LOGIN_THROTTLE_WINDOW_SECONDS: int = var(900, "the login throttle's window")
    PASSWORD_RESETS_PER_ACCOUNT: int = var(
        3, "password-reset requests per target email in one window"
    )
    PASSWORD_RESETS_PER_ADDRESS: int = var(
        20, "password-reset requests per source address in one window"
    )
    PASSWORD_RESET_WINDOW_SECONDS: int = var(3600, "the password-reset throttle's window")
    INVITATIONS_PER_ADDRESS: int = var(
        5, "invitation mails per invited address (from all organizations) in one window"
    )
    INVITATIONS_PER_ORGANIZATION: int = var(50, "invitation mails per organization in one window")
    INVITATION_THROTTLE_WINDOW_SECONDS: int = var(86400, "the invitation throttle's window")


class OAuthVariables(Variables):
    """The OAuth 2.1 authorization server (oauth/)."""

    OAUTH_ISSUER: str = var(
        "",
        "the OAuth authorization server's issuer (RFC 8414); endpoints live under "
        "`<issuer>/oauth/`",
        parse=issuer,
        shown="`SITE_URL`",
    )
    OAUTH_ACCESS_TOKEN_SECONDS: int = var(3600, "lifetime of an OAuth access token")
    OAUTH_REFRESH_TOKEN_SECONDS: int = var(
        30 * 86400, "lifetime of a refresh token (each use rotates it)"
    )
    OAUTH_REFRESH_GRACE_SECONDS: int = var(
        30,
        "a rotated refresh token still works this long, giving the same new pair again "
        "(clients refreshing twice at once); later it is a replay and revokes the grant",
    )
    OAUTH_CODE_SECONDS: int = var(60, "lifetime of an authorization code")
    OAUTH_REGISTRATIONS_PER_MINUTE: int = var(
        30,
        "dynamic client registrations allowed per source address per minute (0: no limit)",
    )
    OAUTH_UNUSED_CLIENT_HOURS: int = var(
        24,
        "self-registered clients that never obtained a token are deleted after this long",
    )
    OAUTH_CIMD_TIMEOUT_SECONDS: float = var(
        5, "how long fetching a client metadata document may take"
    )
    OAUTH_CIMD_MAX_BYTES: int = var(64 * 1024, "largest client metadata document fetched")
    OAUTH_CIMD_ALLOW_HTTP_LOOPBACK: bool = var(
        False, "tests only: accept `http://127.0.0.1…` client metadata documents"
    )
    OAUTH_JWKS_CACHE_SECONDS: int = var(
        300,
        "how long a trusted identity provider's JWKS is kept before it is fetched again "
        "(an unknown key id fetches it at once, at most once a minute)",
    )
    OAUTH_JWKS_ALLOW_HTTP_LOOPBACK: bool = var(
        False, "tests only: accept a trusted identity provider's JWKS at `http://127.0.0.1…`"
    )
    OAUTH_ASSERTION_SKEW_SECONDS: int = var(
        60, "clock skew allowed on an assertion's `exp`, `iat` and `nbf` (ID-JAG, client JWTs)"
    )
    OAUTH_ASSERTION_MAX_SECONDS: int = var(
        3600, "an assertion issued (`iat`) longer ago than this is refused, whatever its `exp`"
    )
