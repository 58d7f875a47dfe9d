"""Print the suite's line and branch coverage apart (CI): `coverage report` mixes them into one
figure, and the two answer different questions (was the line run; was each way out of it taken).

    .venv/bin/python scripts/coverage_summary.py [.coverage data file]
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    data = sys.argv[1] if len(sys.argv) > 1 else ".coverage"
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "coverage.json"
        subprocess.run(
            [sys.executable, "-m", "coverage", "json", "-q", f"--data-file={data}", "-o", str(out)],
            check=True,
        )
        report = json.loads(out.read_text())
    totals = report["totals"]
    lines = 100 * totals["covered_lines"] / max(totals["num_statements"], 1)
    branches = 100 * totals["covered_branches"] / max(totals["num_branches"], 1)
    print(
        f"coverage: lines {lines:.1f}% ({totals['covered_lines']}/{totals['num_statements']}), "
        f"branches {branches:.1f}% ({totals['covered_branches']}/{totals['num_branches']})"
    )
    per_app: dict[str, list[int]] = {}
    for path, entry in report["files"].items():
        app = path.split("/", 1)[0]
        summary = entry["summary"]
        counts = per_app.setdefault(app, [0, 0, 0, 0])
        counts[0] += summary["covered_lines"]
        counts[1] += summary["num_statements"]
        counts[2] += summary["covered_branches"]
        counts[3] += summary["num_branches"]
    for app, (cl, nl, cb, nb) in sorted(per_app.items()):
        print(
            f"  {app:<14} lines {100 * cl / max(nl, 1):5.1f}%  branches {100 * cb / max(nb, 1):5.1f}%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
