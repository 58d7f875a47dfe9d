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
# From a copy of the tree (tracked and new files): building in place would leave build/ behind.
mkdir "$work/src"
(cd "$root" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/src"
"$work/venv/bin/pip" install --quiet -c "$root/requirements.lock" "$work/src"
echo "installed: $("$work/venv/bin/pip" freeze | wc -l) packages, no extras"
cd "$work"
env -u DATABASE_URL -u REDIS_URL "$work/venv/bin/python" "$root/scripts/check_install.py"
