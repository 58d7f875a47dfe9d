"""`manage.py audit verify`: every chain's MACs and links, then the chain heads against the
newest signed checkpoint (audit/checkpoints.py)."""

from dataclasses import dataclass, field
from pathlib import Path

from . import chain, checkpoints


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    broken: list[chain.Broken] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # not of one chain (the checkpoint)

    @property
    def ok(self) -> bool:
        return not self.broken and not self.problems


def _name(organization_id: int | None) -> str:
    return "no organization" if organization_id is None else f"organization {organization_id}"


def verify(
    organization_ids: list[int | None] | None = None, *, checkpoint_file: Path | None = None
) -> Report:
    """Check the given chains (default: every chain in the database or in the checkpoint)
    against the newest checkpoint, or the one in `checkpoint_file`."""
    report = Report()
    checkpoint = None
    try:
        if checkpoint_file is not None:
            checkpoint = checkpoints.read(checkpoint_file)
        else:
            checkpoint = checkpoints.latest()
    except checkpoints.CheckpointInvalid as exc:
        report.problems.append(str(exc))
    if organization_ids is None:
        found = set(chain.chains()) | set(checkpoint.heads if checkpoint else ())
        organization_ids = sorted(found, key=lambda i: -1 if i is None else i)
    for organization_id in organization_ids:
        checked, bad = chain.verify(organization_id)
        if bad is None and checkpoint is not None:
            bad = checkpoints.check(checkpoint, organization_id)
        if bad is None:
            report.lines.append(f"{_name(organization_id)}: {checked} row(s), chain intact")
        else:
            report.broken.append(bad)
            report.lines.append(
                f"{_name(organization_id)}: BROKEN at row {bad.row_id}: {bad.reason}"
            )
    if checkpoint is not None:
        report.lines.append(
            f"checked against the checkpoint of {checkpoint.written_at} ({checkpoint.path})"
        )
    elif not report.problems:
        where = checkpoints.directory() or "nowhere (AUDIT_CHECKPOINT_DIR is empty)"
        report.lines.append(
            f"warning: no checkpoint in {where}: rows deleted from the end of a chain "
            "cannot be noticed until one is written (manage.py audit checkpoint)"
        )
    return report
