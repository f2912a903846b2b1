#!/usr/bin/env node
// The package's `bin`: Node (>= 22.18) runs the TypeScript sources directly. On an older Node, say what is needed
// (scripts/check-node.cjs) instead of failing on the `.ts` import.
import { createRequire } from 'node:module';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) createRequire(import.meta.url)('../scripts/check-node.cjs');
await import('../src/cli/main.ts');
