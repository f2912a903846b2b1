#!/usr/bin/env bash
# Issue 33: the Tool interface and the registry the tool loop dispatches through live with the tool loop
# (tools/tool.ts → engine/tool.ts, tools/tool-registry.ts → engine/tool-registry.ts), so tools/ depends on engine,
# not the reverse. Idempotent: re-run it after a rebase.
set -euo pipefail
cd "$(dirname "$0")/../.."
for name in tool tool-registry; do
  if [ -f "src/tools/$name.ts" ]; then git mv "src/tools/$name.ts" "src/engine/$name.ts"; fi
done
files=$(grep -rlE "tools/tool(-registry)?\.ts'|'\./tool(-registry)?\.ts'" src test bench || true)
for f in $files; do
  sed -i -E -e "s#'(.*)tools/(tool|tool-registry)\.ts'#'\1engine/\2.ts'#" "$f"
  case "$f" in
    src/tools/*.ts) sed -i -E -e "s#'\./(tool|tool-registry)\.ts'#'../engine/\1.ts'#" "$f" ;;
  esac
done
# In engine/ itself the paths are now siblings.
for f in src/engine/*.ts; do
  sed -i -E -e "s#'\.\./engine/(tool|tool-registry)\.ts'#'./\1.ts'#" "$f"
done
