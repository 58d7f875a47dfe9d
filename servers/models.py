from django.core.validators import RegexValidator
from django.db import models

from .slugs import SLUG_RE

TOOL_NAME_RE = r"^[A-Za-z0-9_./-]{1,64}$"


class Server(models.Model):
    AUTH_NONE, AUTH_API_KEY, AUTH_OAUTH = "none", "api_key", "oauth"
    AUTH_API_KEY_OAUTH = "api_key+oauth"
    AUTH_MODES = [
        (AUTH_NONE, "None"),
        (AUTH_API_KEY, "API key"),
        (AUTH_OAUTH, "OAuth"),
        (AUTH_API_KEY_OAUTH, "API key or OAuth"),
    ]
    ACTIVE, PAUSED, DRAFT = "active", "paused", "draft"
    STATUSES = [(ACTIVE, "Active"), (PAUSED, "Paused"), (DRAFT, "Draft")]

    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="servers"
    )
    slug = models.CharField(max_length=63, unique=True, validators=[RegexValidator(SLUG_RE)])
    name = models.CharField(max_length=100)
    title = models.CharField(max_length=200, blank=True)
    version = models.CharField(max_length=40, default="1.0.0")
    instructions = models.TextField(blank=True)
    icons = models.JSONField(default=list, blank=True)
    auth_mode = models.CharField(max_length=20, choices=AUTH_MODES, default=AUTH_API_KEY)
    status = models.CharField(max_length=10, choices=STATUSES, default=ACTIVE)
    allowed_origins = models.JSONField(default=list, blank=True)
    # Calls per minute for each key (or for all anonymous callers together); 0 means no limit.
    rate_limit_per_minute = models.PositiveIntegerField(default=0)
    # The call log keeps argument values only when the owner opts in (secret-like keys never).
    log_arguments = models.BooleanField(default=False)
    # Settings every http tool of the server shares: base URL, upstream auth, forwarded headers.
    http = models.JSONField(default=dict, blank=True)
    # Settings every code tool of the server shares: {"limits": {...}} under the platform maximums.
    code = models.JSONField(default=dict, blank=True)
    # Progressive discovery, output budgets, long calls (servers/discovery/config.py).
    agents = models.JSONField(default=dict, blank=True)
    # What members of a role may use through their keys and grants (servers/access.py):
    # {"member": {"tools": [...], "resources": [...], "prompts": [...]}}; a role left out is free.
    role_access = models.JSONField(default=dict, blank=True)
    # Upstream pinning (servers/upstream/pinning.py): changed or new upstream tools wait for a
    # person's approval unless this is on; the baseline is each upstream's known tool names.
    upstream_auto_approve = models.BooleanField(default=False)
    upstream_baseline = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.slug

    @property
    def accepts_api_key(self) -> bool:
        return accepts_api_key(self.auth_mode)

    @property
    def accepts_oauth(self) -> bool:
        return accepts_oauth(self.auth_mode)


def accepts_api_key(auth_mode: str) -> bool:
    return auth_mode in (Server.AUTH_API_KEY, Server.AUTH_API_KEY_OAUTH)


def accepts_oauth(auth_mode: str) -> bool:
    return auth_mode in (Server.AUTH_OAUTH, Server.AUTH_API_KEY_OAUTH)


class ServerPart(models.Model):
    """What every definition row shares: it belongs to one server and has a place in its lists."""

    position = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["position", "id"]


class Tool(ServerPart):
    server = models.ForeignKey(Server, models.CASCADE, related_name="tools")
    name = models.CharField(max_length=64, validators=[RegexValidator(TOOL_NAME_RE)])
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField()
    input_schema = models.JSONField(default=dict)
    output_schema = models.JSONField(null=True, blank=True)
    annotations = models.JSONField(default=dict, blank=True)
    icons = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    execution = models.JSONField(default=dict, blank=True)
    kind = models.CharField(max_length=20, default="static")
    config = models.JSONField(default=dict, blank=True)
    enabled = models.BooleanField(default=True)
    # Listed directly even when the server lists meta-tools instead of its tools.
    pinned = models.BooleanField(default=False)
    # {maxChars, maxTokens}: a smaller result budget than the server's (gateway/agents/).
    output_budget = models.JSONField(default=dict, blank=True)
    # How hosts show the result: an MCP App generated from a template, or custom HTML
    # (servers/views/; served as a ui:// resource the compiler adds).
    view = models.JSONField(default=dict, blank=True)

    class Meta(ServerPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="tool_name_per_server")
        ]

    def __str__(self) -> str:
        return self.name


class Resource(ServerPart):
    server = models.ForeignKey(Server, models.CASCADE, related_name="resources")
    uri = models.CharField(max_length=2000)
    name = models.CharField(max_length=200)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    mime_type = models.CharField(max_length=200, blank=True)
    text = models.TextField(null=True, blank=True)
    blob = models.TextField(null=True, blank=True, help_text="base64")
    size = models.PositiveBigIntegerField(null=True, blank=True)
    annotations = models.JSONField(default=dict, blank=True)
    icons = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    kind = models.CharField(max_length=20, default="static")
    config = models.JSONField(default=dict, blank=True)

    class Meta(ServerPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["server", "uri"], name="resource_uri_per_server")
        ]

    def __str__(self) -> str:
        return self.uri


class ResourceTemplate(ServerPart):
    server = models.ForeignKey(Server, models.CASCADE, related_name="resource_templates")
    uri_template = models.CharField(max_length=2000)
    name = models.CharField(max_length=200)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    mime_type = models.CharField(max_length=200, blank=True)
    text = models.TextField(null=True, blank=True)
    blob = models.TextField(null=True, blank=True)
    completions = models.JSONField(default=dict, blank=True)
    annotations = models.JSONField(default=dict, blank=True)
    icons = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return self.uri_template


class Prompt(ServerPart):
    server = models.ForeignKey(Server, models.CASCADE, related_name="prompts")
    name = models.CharField(max_length=200)
    title = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    arguments = models.JSONField(default=list, blank=True)
    messages = models.JSONField(default=list, blank=True)
    completions = models.JSONField(default=dict, blank=True)
    icons = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    kind = models.CharField(max_length=20, default="static")
    config = models.JSONField(default=dict, blank=True)

    class Meta(ServerPart.Meta):
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="prompt_name_per_server")
        ]

    def __str__(self) -> str:
        return self.name


class ServerVersion(models.Model):
    """An immutable published definition of a whole server."""

    server = models.ForeignKey(Server, models.CASCADE, related_name="versions")
    version = models.CharField(max_length=40)
    definition = models.JSONField()
    published_at = models.DateTimeField(auto_now_add=True)
    published_by = models.ForeignKey(
        "accounts.User", models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-published_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["server", "version"], name="one_version_number_per_server"
            )
        ]

    def __str__(self) -> str:
        return f"{self.server.slug}@{self.version}"


class UpstreamReview(models.Model):
    """An upstream tool's definition that changed (or a tool the upstream newly offers), held
    until someone approves or rejects it. `approved` is what is served meanwhile (the pin),
    `pending` what the upstream says now."""

    CHANGED, NEW = "changed", "new"
    PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
    STATES = [(PENDING, "Pending"), (APPROVED, "Approved"), (REJECTED, "Rejected")]

    server = models.ForeignKey(Server, models.CASCADE, related_name="upstream_reviews")
    tool = models.ForeignKey(Tool, models.CASCADE, null=True, blank=True, related_name="+")
    kind = models.CharField(max_length=10, choices=[(CHANGED, "Changed"), (NEW, "New")])
    url = models.CharField(max_length=2000)
    connection = models.JSONField(default=dict, blank=True)  # url, transport, headers
    upstream_name = models.CharField(max_length=200)
    approved = models.JSONField(default=dict, blank=True)
    pending = models.JSONField(default=dict)
    digest = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=STATES, default=PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        "accounts.User", models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["server", "state"], name="upstream_review_open")]

    def __str__(self) -> str:
        return f"{self.server_id}:{self.upstream_name} ({self.kind}, {self.state})"


class Change(models.Model):
    """A change the per-process caches must drop, written in the transaction that made it, so it
    reaches every process even when Redis missed it (see servers/invalidation.py).

    `txid` is the writing transaction's id: a reader that remembers the oldest transaction still
    running at its last look (its snapshot's xmin) finds every row committed since, in whatever
    order the writers committed. Rows are pruned after CHANGE_LOG_RETENTION_HOURS.
    """

    SERVER, KEY, VAULT = "server", "key", "vault"
    CONNECTION = "conn"  # an organization's connected accounts (connections/token_cache.py)

    kind = models.CharField(max_length=8)
    subject = models.CharField(max_length=200)
    txid = models.BigIntegerField(null=True, db_index=True)
    created_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.kind}:{self.subject}"


class ToolEmbedding(models.Model):
    """One tool text's embedding (servers/discovery/embedding.py), keyed by the digest of the model
    and the text (servers/discovery/vectors.tool_document): every version and server whose tool reads
    the same shares the row, and a changed tool gets a new one. Computed at publish
    (servers/embeddings.py), read when a snapshot is loaded."""

    digest = models.CharField(max_length=64, primary_key=True)
    vector = models.BinaryField()  # little-endian float32, embedding.DIMENSIONS of them
    created_at = models.DateTimeField(auto_now_add=True)


class SecretReach(models.Model):
    """An approval that one tool, exactly as configured (`digest` of its kind and config), may
    read the secrets it names. Members build tools but may not read secrets, so a tool of theirs
    that reaches one is held until someone whose role may (admin and above) approves it:
    servers/secret_reach.py, docs/roles.md."""

    server = models.ForeignKey(Server, models.CASCADE, related_name="secret_reaches")
    tool = models.CharField(max_length=64)
    digest = models.CharField(max_length=64)
    secrets = models.JSONField(default=list)  # the names, sorted, as approved
    approved_by = models.ForeignKey(
        "accounts.User", models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["server", "tool", "digest"], name="secret_reach_once")
        ]

    def __str__(self) -> str:
        return f"{self.server_id}:{self.tool} reads {', '.join(self.secrets)}"
