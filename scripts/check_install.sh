#!/usr/bin/env bash
# `make check-install`: install the project WITHOUT extras into a fresh virtualenv, pinned by
# requirements.lock, then run scripts/check_install.py with it from outside the source tree, so
# only what the install put into site-packages can be imported.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --upgrade pip
"$work/venv/bin/pip" install --quiet -c "$root/requirements.lock" "$root"
echo "installed: $("$work/venv/bin/pip" freeze | wc -l) packages, no extras"
cd "$work"
env -u DATABASE_URL -u REDIS_URL "$work/venv/bin/python" "$root/scripts/check_install.py"
