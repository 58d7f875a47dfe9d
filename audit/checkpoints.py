"""Signed checkpoints of every chain's head, written outside the database.

A MAC chain shows every edit and every removed row except the newest ones: delete the last rows
of a chain and what is left still verifies. So every AUDIT_CHECKPOINT_SECONDS (Celery beat) the
head of each chain (its newest row's id and MAC) is written to a file in AUDIT_CHECKPOINT_DIR,
MACed with the chain's current key (audit/keys.py), and `verify` checks the database against the
newest file: a checkpointed head that is gone (and not purged by retention, which keeps an
anchor past it) or that carries another MAC means the chain was cut or rewritten. Rows written
after the newest checkpoint are covered by the next one: the window is AUDIT_CHECKPOINT_SECONDS.

The directory must be one the database's holders cannot write (another volume, host or a
write-once bucket synced from it); a checkpoint whose MAC does not verify is reported.
"""

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
from django.conf import settings

from .chain import Broken, chains, head, sign, signed_by
from .keys import current
from .models import AuditAnchor, AuditEvent

PREFIX = "audit-checkpoint-"
KEEP = 1000  # files kept (the newest); verification reads only the newest


@dataclass
class Checkpoint:
    path: Path
    written_at: str
    heads: dict[int | None, tuple[int, str]]  # organization id -> (head row id, its MAC)


def directory() -> Path | None:
    configured = settings.AUDIT_CHECKPOINT_DIR
    return Path(configured) if configured else None


def _content(written_at: str, heads: list[dict], key_id: str) -> bytes:
    # A prefix no row's or anchor's content starts with (one key MACs all three).
    return b"getmcp audit checkpoint\x00" + orjson.dumps(
        {"version": 1, "written_at": written_at, "chains": heads, "key_id": key_id},
        option=orjson.OPT_SORT_KEYS,
    )


def export(target: Path | None = None) -> Path | None:
    """Write one checkpoint of every chain's head; None when no directory is configured."""
    target = target or directory()
    if target is None:
        return None
    target.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    written_at = now.isoformat(timespec="microseconds")
    heads = []
    for organization_id in chains():
        newest = head(organization_id)
        if newest is not None:
            heads.append(
                {"organization_id": organization_id, "head_id": newest[0], "head_mac": newest[1]}
            )
    key_id = current().id
    _, mac = sign(_content(written_at, heads, key_id))
    body = {"version": 1, "written_at": written_at, "chains": heads, "key_id": key_id, "mac": mac}
    path = target / f"{PREFIX}{now:%Y%m%dT%H%M%S%fZ}.json"
    # Written whole or not at all: a reader never sees half a checkpoint.
    fd, tmp = tempfile.mkstemp(dir=target, prefix=".tmp-")
    with os.fdopen(fd, "wb") as out:
        out.write(orjson.dumps(body, option=orjson.OPT_INDENT_2))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    for old in sorted(target.glob(f"{PREFIX}*.json"))[:-KEEP]:
        old.unlink(missing_ok=True)
    return path


class CheckpointInvalid(Exception):
    """The newest checkpoint cannot be trusted (unreadable, or its MAC does not verify)."""


def latest(source: Path | None = None) -> Checkpoint | None:
    """The newest checkpoint, its MAC verified; None when there is none."""
    source = source or directory()
    if source is None or not source.is_dir():
        return None
    files = sorted(source.glob(f"{PREFIX}*.json"))
    return read(files[-1]) if files else None


def read(path: Path) -> Checkpoint:
    """One checkpoint file (a kept copy from elsewhere, say), its MAC verified."""
    try:
        body = json.loads(path.read_text())
        heads = body["chains"]
        content = _content(body["written_at"], heads, body["key_id"])
        ok = signed_by(content, body["key_id"], body["mac"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointInvalid(f"checkpoint {path} is unreadable ({exc})") from exc
    if ok is None:
        raise CheckpointInvalid(
            f"checkpoint {path} is MACed with key {body['key_id']!r}, "
            "which AUDIT_MAC_KEYS no longer holds"
        )
    if not ok:
        raise CheckpointInvalid(f"checkpoint {path} does not match its MAC (altered?)")
    return Checkpoint(
        path,
        body["written_at"],
        {c["organization_id"]: (c["head_id"], c["head_mac"]) for c in heads},
    )


def check(checkpoint: Checkpoint, organization_id: int | None) -> Broken | None:
    """Whether the chain still holds the head the checkpoint saw (or purged past it)."""
    if organization_id not in checkpoint.heads:
        return None
    head_id, head_mac = checkpoint.heads[organization_id]
    row = AuditEvent.objects.filter(pk=head_id).values_list("organization_id", "hash").first()
    if row is not None:
        if row != (organization_id, head_mac):
            return Broken(
                organization_id,
                head_id,
                f"differs from the checkpoint of {checkpoint.written_at} (the row was rewritten)",
            )
        return None
    anchor = AuditAnchor.objects.filter(organization_id=organization_id).first()
    if anchor is not None and anchor.first_id > head_id:
        return None  # purged by retention; the anchor (MACed) says where the chain now starts
    newest = head(organization_id)
    return Broken(
        organization_id,
        head_id,
        f"was this chain's newest row at the checkpoint of {checkpoint.written_at} and is gone: "
        "rows were deleted from the end of the chain (truncated); the newest left is "
        + (f"row {newest[0]}" if newest else "none"),
    )
