from django.db import models


class CallLog(models.Model):
    """One MCP or REST call, written in batches by drain_call_log (never on the hot path)."""

    MCP, REST, WEBTOOLS = "mcp", "rest", "webtools"
    SURFACES = [(MCP, "MCP"), (REST, "REST"), (WEBTOOLS, "Web tools")]
    OK, TOOL_ERROR, ERROR = "ok", "tool_error", "error"
    OUTCOMES = [(OK, "OK"), (TOOL_ERROR, "Tool error"), (ERROR, "Error")]

    # Given when the call is recorded: a row the drain stores twice (a retried batch) is
    # stored once. Null on rows written before it existed.
    uid = models.UUIDField(unique=True, null=True, blank=True, editable=False)
    at = models.DateTimeField(db_index=True)
    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="call_logs"
    )
    # Logs outlive the server they describe, so analytics of the organization stay whole.
    server = models.ForeignKey(
        "servers.Server", models.SET_NULL, null=True, blank=True, related_name="call_logs"
    )
    server_slug = models.CharField(max_length=63, blank=True)
    surface = models.CharField(max_length=10, choices=SURFACES, default=MCP)
    method = models.CharField(max_length=100)
    tool = models.CharField(max_length=200, null=True, blank=True)
    api_key = models.ForeignKey(
        "accounts.ApiKey", models.SET_NULL, null=True, blank=True, related_name="call_logs"
    )
    key_name = models.CharField(max_length=100, blank=True)
    # OAuth calls: the user the grant acts as, and the app (client) it was given to.
    user = models.ForeignKey(
        "accounts.User", models.SET_NULL, null=True, blank=True, related_name="call_logs"
    )
    oauth_client = models.CharField(max_length=200, blank=True)
    oauth_grant_id = models.PositiveBigIntegerField(null=True, blank=True)
    client_name = models.CharField(max_length=200, blank=True)
    client_version = models.CharField(max_length=100, blank=True)
    user_agent = models.CharField(max_length=500, blank=True)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    outcome = models.CharField(max_length=12, choices=OUTCOMES, default=OK)
    error = models.TextField(blank=True)
    latency_ms = models.FloatField(default=0.0)
    # The connected accounts the call acted through ("github", "slack (shared)"): provider keys,
    # never a token.
    connection = models.CharField(max_length=200, blank=True, default="")
    arguments = models.JSONField(null=True, blank=True)
    session_id = models.CharField(max_length=100, blank=True)
    request_id = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["organization", "-at"], name="calllog_org_at"),
            models.Index(fields=["server", "-at"], name="calllog_server_at"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.server_slug} {self.method} {self.outcome}"


class RetentionOverride(models.Model):
    """An organization keeping its call log longer or shorter than CALL_LOG_RETENTION_DAYS."""

    organization = models.OneToOneField(
        "accounts.Organization", models.CASCADE, related_name="call_log_retention"
    )
    days = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.organization}: {self.days} days"
