#!/usr/bin/env bash
# Installs the dashboard's vendored browser libraries into static/vendor/ (gitignored) from the
# npm registry, at pinned versions: Ace (the code editor of JSON, YAML and Python fields) and
# js-yaml (YAML errors shown as you type), and the official MCP Apps SDK (@modelcontextprotocol/ext-apps):
# its app side as published (app-with-deps.js, which tool views inline), and its host side
# (AppBridge, used by the playground's view preview) bundled with its dependencies by esbuild,
# because the published app-bridge.js imports the MCP SDK's packages by bare name. Nothing else
# is built; the packages' own minified builds are copied. Without npm it says so and exits 0:
# fields then stay plain textareas and views cannot reach their host.
set -euo pipefail
cd "$(dirname "$0")/.."

ACE_VERSION=1.45.2
JS_YAML_VERSION=4.1.0
EXT_APPS_VERSION=2.0.4
MCP_CORE_VERSION=2.4.0
ZOD_VERSION=4.6.7
ESBUILD_VERSION=0.28.2
VENDOR=static/vendor
CACHE=${ASSETS_CACHE:-var/assets-cache}
STAMP="$VENDOR/.versions"
WANT="ace-builds@$ACE_VERSION js-yaml@$JS_YAML_VERSION @modelcontextprotocol/ext-apps@$EXT_APPS_VERSION"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -f "$VENDOR/ace/ace.js" ] \
  && [ -f "$VENDOR/ext-apps/app-bridge.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "assets: npm is missing; JSON/YAML fields stay plain textareas (install npm, then make assets)" >&2
  exit 0
fi

mkdir -p "$CACHE"
if ! npm install --prefix "$CACHE" --no-save --no-audit --no-fund --loglevel=error \
  "ace-builds@$ACE_VERSION" "js-yaml@$JS_YAML_VERSION" \
  "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" "@modelcontextprotocol/client@$MCP_CORE_VERSION" \
  "@modelcontextprotocol/core@$MCP_CORE_VERSION" "zod@$ZOD_VERSION" "esbuild@$ESBUILD_VERSION" \
  >/dev/null; then
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
mkdir -p "$VENDOR.tmp/ext-apps"
EXT="$CACHE/node_modules/@modelcontextprotocol/ext-apps"
cp "$EXT/dist/src/app-with-deps.js" "$VENDOR.tmp/ext-apps/app-with-deps.js"
cp "$EXT/LICENSE" "$VENDOR.tmp/ext-apps/LICENSE"
# The host side as one ES module exporting AppBridge and PostMessageTransport.
if ! "$CACHE/node_modules/.bin/esbuild" "$EXT/dist/src/app-bridge.js" --bundle --format=esm \
  --minify --platform=browser --log-level=error --outfile="$VENDOR.tmp/ext-apps/app-bridge.js"; then
  # The rest still installs; the playground then shows no view preview.
  echo "assets: esbuild could not bundle the MCP Apps host side; no view preview" >&2
  rm -f "$VENDOR.tmp/ext-apps/app-bridge.js"
fi
echo "$WANT" > "$VENDOR.tmp/.versions"
rm -rf "$VENDOR"
mv "$VENDOR.tmp" "$VENDOR"
echo "assets: installed $WANT into $VENDOR/"
