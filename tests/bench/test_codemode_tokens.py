"""bench/codemode_tokens.py, the token report of a job with and without code mode, runs on the
product's current code paths and finds code mode cheaper in what the model reads."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_token_report_runs_and_code_mode_reads_fewer_tokens_for_the_same_job():
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "codemode_tokens.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "job: 4 late orders of 20 open, 3 customers emailed" in out
    rows = {
        m.group(1).strip(): (int(m.group(2)), int(m.group(3)))
        for m in re.finditer(
            r"^(calls|model turns|input over the turns)\s+(\d+)\s+(\d+)", out, re.M
        )
    }
    assert rows["calls"] == (13, 7)
    assert rows["model turns"] == (14, 8)
    without, with_code_mode = rows["input over the turns"]
    assert with_code_mode < without / 2
