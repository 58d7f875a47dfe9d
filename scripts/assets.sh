#!/usr/bin/env bash
# Installs the dashboard's vendored browser libraries into static/vendor/ (gitignored) from the
# npm registry, at pinned versions: Ace (the code editor of JSON, YAML and Python fields) and
# js-yaml (YAML errors shown as you type). Nothing is built; the packages' own minified builds
# are copied. Without npm it says so and exits 0: every field then stays a plain textarea.
set -euo pipefail
cd "$(dirname "$0")/.."

ACE_VERSION=1.45.2
JS_YAML_VERSION=4.1.0
VENDOR=static/vendor
CACHE=${ASSETS_CACHE:-var/assets-cache}
STAMP="$VENDOR/.versions"
WANT="ace-builds@$ACE_VERSION js-yaml@$JS_YAML_VERSION"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -f "$VENDOR/ace/ace.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "assets: npm is missing; JSON/YAML fields stay plain textareas (install npm, then make assets)" >&2
  exit 0
fi

mkdir -p "$CACHE"
if ! npm install --prefix "$CACHE" --no-save --no-audit --no-fund --loglevel=error \
  "ace-builds@$ACE_VERSION" "js-yaml@$JS_YAML_VERSION" >/dev/null; then
  echo "assets: npm could not install $WANT; JSON/YAML fields stay plain textareas" >&2
  exit 0
fi

rm -rf "$VENDOR.tmp"
mkdir -p "$VENDOR.tmp/ace" "$VENDOR.tmp/js-yaml"
cp -R "$CACHE/node_modules/ace-builds/src-min-noconflict/." "$VENDOR.tmp/ace/"
cp -R "$CACHE/node_modules/ace-builds/css" "$VENDOR.tmp/ace/" 2>/dev/null || true
cp "$CACHE/node_modules/ace-builds/LICENSE" "$VENDOR.tmp/ace/LICENSE"
cp "$CACHE/node_modules/js-yaml/dist/js-yaml.min.js" "$VENDOR.tmp/js-yaml/"
cp "$CACHE/node_modules/js-yaml/LICENSE" "$VENDOR.tmp/js-yaml/LICENSE"
echo "$WANT" > "$VENDOR.tmp/.versions"
rm -rf "$VENDOR"
mv "$VENDOR.tmp" "$VENDOR"
echo "assets: installed $WANT into $VENDOR/"
