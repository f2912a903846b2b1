#!/usr/bin/env bash
# Issue 33, one Log type: the `Logger` (engine/logger.ts) and `SchedulingLog` (scheduling/scheduling-log.ts) aliases
# become the one `Log` of domain/log.ts, `silentLogger` becomes `silentLog`. Idempotent: re-run it after a rebase.
set -euo pipefail
cd "$(dirname "$0")/../.."
files=$(grep -rlE "(engine/logger|scheduling-log|\./logger)\.ts'|\bSchedulingLog\b|\bsilentLogger\b" src test bench || true)
for f in $files; do
  sed -i -E \
    -e "s#from '(.*)engine/logger\.ts'#from '\1domain/log.ts'#" \
    -e "s#from '(.*)scheduling/scheduling-log\.ts'#from '\1domain/log.ts'#" \
    -e "s#\bsilentLogger\b#silentLog#g" \
    -e "s#\bSchedulingLog\b#Log#g" \
    "$f"
  case "$f" in
    src/scheduling/*/*.ts) sed -i -E -e "s#from '\.\./scheduling-log\.ts'#from '../../domain/log.ts'#" "$f" ;;
    src/scheduling/*.ts) sed -i -E -e "s#from '\./scheduling-log\.ts'#from '../domain/log.ts'#" "$f" ;;
    src/engine/*.ts)
      if grep -q "from './logger.ts'" "$f"; then
        sed -i -E -e "s#^import type \{ Logger \} from '\./logger\.ts';#import type { Log } from '../domain/log.ts';#" \
          -e "s#\bLogger\b#Log#g" "$f"
      fi ;;
  esac
  if grep -q "domain/log.ts'" "$f" && grep -qE "import .*\bLogger\b.* from '.*domain/log\.ts'" "$f"; then
    sed -i -E -e "s#\bLogger\b#Log#g" "$f"
  fi
done
# A file that already took silentLog from observability/log.ts keeps that one import.
for f in $(grep -rlE "^import \{ silentLog \} from '.*observability/log\.ts';" src test bench || true); do
  sed -i -E "/^import \{ silentLog \} from '.*domain\/log\.ts';/d" "$f"
done
rm -f src/engine/logger.ts src/scheduling/scheduling-log.ts
