"""Who a task runs for: the caller its row names, checked again when a worker runs it.

A task outlives its request, so the worker that runs it never saw the pipeline's `Caller`. The
row keeps that caller as it was at submission (the person or service account, their role, the
credential and the OAuth client); here it becomes a `Caller` again, with the role looked up
anew: a person who left the organization, or a disabled service account, gets no run, and a
role lowered since the submission narrows the run. A role raised since then does not widen it:
the run is never wider than the request that made it.
"""

from typing import cast

from accounts.models import Membership, ServiceAccount
from accounts.policy import RANK
from mcp_protocol.caller import ANONYMOUS, Caller, CredentialKind, PrincipalKind, stored
from mcp_protocol.errors import INVALID_REQUEST, McpError

from .models import Task


class PrincipalGone(McpError):
    """The person or service account behind the task can no longer act in the organization."""

    def __init__(self) -> None:
        super().__init__(
            INVALID_REQUEST,
            "The caller who submitted this task can no longer act in the organization",
            {"reason": "principal-gone"},
        )


def row_fields(caller: Caller) -> dict[str, object]:
    """The task row's columns for a caller (lifecycle.create_task stores them)."""
    return {
        "credential": caller.ident,
        "principal": "" if caller.principal == "anonymous" else caller.principal,
        "principal_id": caller.principal_id,
        "role": caller.role,
        "credential_kind": caller.credential_kind,
        "credential_id": caller.credential_id,
        "credential_name": caller.credential_name,
        "client": caller.client,
    }


def submitted(task: Task) -> Caller:
    """The caller as the row keeps it from the submission."""
    if not task.credential_kind:
        # A row made before the principal was kept: only its credential's name is known.
        return stored(task.organization_id, task.credential)
    if task.credential_kind == "none":
        return ANONYMOUS
    return Caller(
        organization_id=task.organization_id,
        principal=cast(PrincipalKind, task.principal or "person"),
        principal_id=task.principal_id,
        role=task.role,
        credential_kind=cast(CredentialKind, task.credential_kind),
        credential_id=task.credential_id,
        credential_name=task.credential_name,
        client=task.client,
    )


def current_role(caller: Caller) -> str | None:
    """The principal's role in the organization now; None when it can no longer act there."""
    principal_id, organization_id = caller.principal_id, caller.organization_id
    if principal_id is None or organization_id is None:
        return None
    if caller.principal == "service_account":
        account = (
            ServiceAccount.objects.filter(pk=principal_id, organization_id=organization_id)
            .values("role", "disabled_at")
            .first()
        )
        if account is None or account["disabled_at"] is not None:
            return None
        return str(account["role"])
    membership = Membership.objects.filter(
        user_id=principal_id, organization_id=organization_id
    ).values_list("role", flat=True)
    return membership.first()


def narrower(submitted_role: str, now: str) -> str:
    """The lower of two roles (the submitted one when a role is unknown to the policy)."""
    if submitted_role not in RANK or now not in RANK:
        return submitted_role
    return now if RANK[now] < RANK[submitted_role] else submitted_role


def at_execution(task: Task) -> Caller:
    """The caller a worker runs the task as: the submitted one, its role checked again.
    Raises PrincipalGone when the principal can no longer act in the organization."""
    caller = submitted(task)
    if caller.principal_id is None:
        # An anonymous caller, a key made outside every surface, or an old row: no principal
        # to look up, so nothing can have changed about it.
        return caller
    now = current_role(caller)
    if now is None:
        raise PrincipalGone()
    role = narrower(caller.role, now) if caller.role else caller.role
    if role == caller.role:
        return caller
    return Caller(
        organization_id=caller.organization_id,
        principal=caller.principal,
        principal_id=caller.principal_id,
        role=role,
        credential_kind=caller.credential_kind,
        credential_id=caller.credential_id,
        credential_name=caller.credential_name,
        client=caller.client,
    )
