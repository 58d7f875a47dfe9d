"""What the doctor hands back: steps with a verdict, the exchange behind it and a fix in words."""

from dataclasses import asdict, dataclass, field

PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"


@dataclass
class Step:
    family: str  # "deployment", "claude.ai / Claude Desktop / ChatGPT", "Cursor, VS Code, ..."
    name: str
    status: str
    detail: str = ""
    fix: str = ""
    request: str = ""  # what was sent, secrets masked
    response: str = ""  # what came back (status, headers that matter, the body's start)
    elapsed_ms: float | None = None


@dataclass
class Report:
    slug: str
    url: str
    steps: list[Step] = field(default_factory=list)

    def add(self, step: Step) -> Step:
        self.steps.append(step)
        return step

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def counts(self) -> dict[str, int]:
        counts = {PASS: 0, WARN: 0, FAIL: 0, SKIP: 0}
        for step in self.steps:
            counts[step.status] += 1
        return counts

    @property
    def healthy(self) -> bool:
        return not self.counts[FAIL]

    def families(self) -> list[tuple[str, list[Step]]]:
        grouped: dict[str, list[Step]] = {}
        for step in self.steps:
            grouped.setdefault(step.family, []).append(step)
        return list(grouped.items())

    def as_dict(self) -> dict:
        return {
            "slug": self.slug,
            "url": self.url,
            "healthy": self.healthy,
            "counts": self.counts,
            "steps": [asdict(s) for s in self.steps],
        }
