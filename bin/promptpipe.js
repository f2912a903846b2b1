#!/usr/bin/env node
// The package's `bin`: Node (>= 22.18) runs the TypeScript sources directly.
import '../src/cli/main.ts';
