"""`audit_record(...)`: the one call that writes an audit row, and the diffs it stores.

Values that could be secret never reach a row: fields named like credentials are replaced by
`***` wherever they occur in a diff, and the organization's vault values are masked
(vault.masking) in every string, in case one was pasted into a config.
"""

import logging
import re

from .chain import append, normalized
from .context import Actor, current_actor

log = logging.getLogger(__name__)

REDACTED = "***"
SECRET_NAME = re.compile(
    r"(authorization|password|passwd|secret|token|api[_-]?key|apikey|cookie|credential|"
    r"private[_-]?key|ciphertext|digest)",
    re.IGNORECASE,
)


def redact(value):
    """The value with every entry under a credential-like key replaced by ***."""
    if isinstance(value, dict):
        return {
            k: (
                REDACTED
                if SECRET_NAME.search(str(k)) and v not in (None, "", {}, [])
                else redact(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _vault_masker(organization_id):
    from vault.masking import Masker
    from vault.models import Secret

    values = []
    for secret in Secret.objects.filter(organization_id=organization_id):
        try:
            values.append(secret.reveal())
            if secret.test_ciphertext:
                values.append(secret.reveal(test=True))
        except Exception:  # a key rotated away: nothing of it can leak either
            continue
    return Masker(values)


def diff_of(before: dict | None, after: dict | None) -> dict:
    """{"before": {...}, "after": {...}} of the fields that differ (all of them on create or
    delete)."""
    before, after = normalized(before or {}), normalized(after or {})
    if not before or not after:
        return {k: v for k, v in (("before", before), ("after", after)) if v}
    keys = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    return {
        "before": {k: before.get(k) for k in keys},
        "after": {k: after.get(k) for k in keys},
    }


def audit_record(
    *,
    action: str,
    organization_id: int | None,
    target_type: str = "",
    target_id: str = "",
    target_label: str = "",
    before: dict | None = None,
    after: dict | None = None,
    detail: dict | None = None,
    actor: Actor | None = None,
):
    """Append one audit row. `before`/`after` are the target's fields (only what changed is
    kept); `detail` is anything else worth keeping (a reason, a version)."""
    actor = actor or current_actor()
    diff = diff_of(before, after)
    if detail:
        diff["detail"] = normalized(detail)
    diff = redact(diff)
    if organization_id is not None and diff:
        try:
            diff = _vault_masker(organization_id).mask_data(diff)
        except Exception:  # the vault unreadable (no keys configured): names-only redaction
            log.warning("audit: could not mask vault values", exc_info=True)
    return append(
        organization_id=organization_id,
        actor_type=actor.type,
        actor_id=str(actor.id or "")[:64],
        actor_label=str(actor.label or "")[:300],
        address=actor.address,
        action=action,
        target_type=target_type,
        target_id=str(target_id or "")[:64],
        target_label=str(target_label or "")[:300],
        diff=diff,
    )
