#!/usr/bin/env bash
# Issue 33, ground floor: rewrites imports of the Clock interface (scheduling/clock.ts → domain/clock.ts) and of the
# state-data accessors (engine/participant-data.ts → domain/participant-data.ts). Idempotent: re-run it after a
# rebase to fix the import lines of files that arrived meanwhile.
set -euo pipefail
cd "$(dirname "$0")/../.."
files=$(grep -rlE "(scheduling/clock|participant-data|\./clock)\.ts'" src test bench || true)
for f in $files; do
  sed -i -E \
    -e "s#^import type \{ Clock \} from '(.*)scheduling/clock\.ts';#import type { Clock } from '\1domain/clock.ts';#" \
    -e "s#^import \{ type Clock, (.*) \} from '(.*)scheduling/clock\.ts';#import type { Clock } from '\2domain/clock.ts';\nimport { \1 } from '\2scheduling/clock.ts';#" \
    -e "s#(from |import\()'(.*)engine/participant-data\.ts'#\1'\2domain/participant-data.ts'#" \
    "$f"
  case "$f" in
    src/scheduling/*/*.ts)
      sed -i -E \
        -e "s#^import type \{ Clock \} from '\.\./clock\.ts';#import type { Clock } from '../../domain/clock.ts';#" \
        -e "s#^import \{ type Clock, (.*) \} from '\.\./clock\.ts';#import type { Clock } from '../../domain/clock.ts';\nimport { \1 } from '../clock.ts';#" \
        "$f" ;;
    src/scheduling/*.ts)
      sed -i -E \
        -e "s#^import type \{ Clock \} from '\./clock\.ts';#import type { Clock } from '../domain/clock.ts';#" \
        -e "s#^import \{ type Clock, (.*) \} from '\./clock\.ts';#import type { Clock } from '../domain/clock.ts';\nimport { \1 } from './clock.ts';#" \
        "$f" ;;
    src/engine/*.ts)
      sed -i -E -e "s#from '\./participant-data\.ts'#from '../domain/participant-data.ts'#" "$f" ;;
  esac
done
