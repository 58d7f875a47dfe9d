import secrets

from django.db import models


def new_task_id() -> str:
    # Task ids are bearer-like handles (the spec requires them to be unguessable): 192 random bits.
    return secrets.token_urlsafe(24)


class Task(models.Model):
    """One task-augmented tools/call: its arguments, where it stands, and its outcome."""

    WORKING, INPUT_REQUIRED = "working", "input_required"
    COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
    STATUSES = [
        (WORKING, "Working"),
        (INPUT_REQUIRED, "Input required"),
        (COMPLETED, "Completed"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
    ]
    TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

    id = models.CharField(primary_key=True, max_length=64, default=new_task_id, editable=False)
    organization = models.ForeignKey(
        "accounts.Organization", models.CASCADE, related_name="mcp_tasks"
    )
    server = models.ForeignKey("servers.Server", models.CASCADE, related_name="mcp_tasks")
    # The published version the call was made against; blank means whatever is served.
    server_version = models.CharField(max_length=40, blank=True)
    # The credential's stable name (Caller.ident): what every lookup of the task matches.
    credential = models.CharField(max_length=200)
    # Who stood behind that credential when the task was submitted (mcp_protocol.caller.Caller),
    # so the worker that runs it knows the person or service account, their role and client.
    # Blank on rows made before these were kept, and for an anonymous caller.
    principal = models.CharField(max_length=20, blank=True)
    principal_id = models.PositiveBigIntegerField(null=True, blank=True)
    # The role at submission: the widest the run may have (the worker checks the role again).
    role = models.CharField(max_length=10, blank=True)
    credential_kind = models.CharField(max_length=10, blank=True)
    credential_id = models.PositiveBigIntegerField(null=True, blank=True)
    credential_name = models.CharField(max_length=200, blank=True)
    client = models.CharField(max_length=200, blank=True)
    tool_name = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict)
    protocol_version = models.CharField(max_length=20, blank=True)
    client_capabilities = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=STATUSES, default=WORKING)
    status_message = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    input_requests = models.JSONField(default=dict, blank=True)
    input_responses = models.JSONField(default=dict, blank=True)
    ttl_ms = models.PositiveBigIntegerField()
    poll_interval_ms = models.PositiveIntegerField(default=500)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    expires_at = models.DateTimeField(db_index=True)
    celery_task_id = models.CharField(max_length=64, blank=True)
    # When the task was last handed to a worker queue; a task never claimed long after this was
    # lost with a worker that had taken it but not started it, and is handed out again.
    dispatched_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [
            models.Index(fields=["organization", "credential", "-created_at"]),
            models.Index(fields=["status", "heartbeat_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.tool_name} {self.id[:8]}… ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL
