import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CpuProfile,
  componentOfFile,
  sourceMapLocator,
  summarizeCpuProfile,
  summarizeProfileDirectory,
} from '../../bench/e2e/cpu-profile.ts';

function frame(id: number, functionName: string, url: string, lineNumber = 0) {
  return { id, callFrame: { functionName, url, lineNumber, columnNumber: 0 } };
}

describe('the benchmark CPU profile summary', () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it('names the component of a file: packages, grouped packages, our layers, our SQLite wrappers, Node modules', () => {
    expect(componentOfFile('/app/node_modules/kysely/dist/esm/query-executor.js')).toBe(
      'Kysely (query building and execution)',
    );
    expect(componentOfFile('/app/node_modules/@fastify/ajv-compiler/index.js')).toBe('Fastify (HTTP server)');
    expect(componentOfFile('/app/node_modules/find-my-way/index.js')).toBe('Fastify (HTTP server)');
    expect(componentOfFile('/app/node_modules/libphonenumber-js/build/parse.js')).toBe('libphonenumber-js');
    expect(componentOfFile('/app/dist/engine/tool-loop.js')).toBe('PromptPipe: engine');
    expect(componentOfFile('/app/src/channels/inbound-service.ts')).toBe('PromptPipe: channels');
    expect(componentOfFile('/app/dist/store/sqlite/statement-cache.js')).toBe('SQLite (native, via better-sqlite3)');
    expect(componentOfFile('/app/dist/store/sqlite/sqlite-store.js')).toBe('PromptPipe: store');
    expect(componentOfFile('node:_http_client')).toBe('Node.js: HTTP and sockets');
    expect(componentOfFile('node:internal/deps/undici/undici')).toBe('Node.js: fetch (undici)');
    expect(componentOfFile('node:internal/streams/readable')).toBe('Node.js: streams');
    expect(componentOfFile('node:events')).toBe('Node.js: other built-in modules');
  });

  it('shares busy samples among components, counting idle samples apart', () => {
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(root)', ''),
        frame(2, '(idle)', ''),
        frame(3, 'all', 'file:///app/bundle.js', 10),
        frame(4, 'compileQuery', 'file:///app/bundle.js', 20),
        frame(5, '(garbage collector)', ''),
        frame(6, 'runMicrotasks', ''),
        frame(7, 'writev', ''),
        frame(8, '(program)', ''),
      ],
      // 2 idle; 8 busy: 4 SQLite, 1 Kysely, 1 GC, 1 promise jobs, 1 system call.
      samples: [2, 3, 3, 4, 2, 3, 5, 6, 3, 7],
    };
    const byLine: Record<number, string> = {
      10: '/app/dist/store/sqlite/statement-cache.js',
      20: '/app/node_modules/kysely/dist/esm/compiler.js',
    };
    const summary = summarizeCpuProfile(profile, (_url, line) => byLine[line]);
    expect(summary.idle).toBeCloseTo(0.2);
    expect(summary.components).toEqual([
      { component: 'SQLite (native, via better-sqlite3)', share: 0.5 },
      { component: 'Kysely (query building and execution)', share: 0.125 },
      { component: 'garbage collection', share: 0.125 },
      { component: 'promise jobs (microtasks)', share: 0.125 },
      { component: 'native bindings (system calls)', share: 0.125 },
    ]);
  });

  it("maps a bundle's frames to their modules through the source map next to it, and reads a profile directory", async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-profile-test-'));
    // Laid out like the repository: dist/bundle/main.js, dist/<layer>/, node_modules/.
    const bundle = join(directory, 'dist', 'bundle', 'main.js');
    await mkdir(join(directory, 'dist', 'bundle'), { recursive: true });
    await writeFile(bundle, 'function a() {}\nfunction b() {}\n');
    // Line 0 comes from dist/engine/turn.js, line 1 from node_modules/openai/client.js (relative to the bundle).
    const map = {
      version: 3,
      sources: ['../engine/turn.js', '../../node_modules/openai/client.js'],
      names: [],
      mappings: 'AAAA;ACAA',
    };
    await writeFile(`${bundle}.map`, JSON.stringify(map));
    const url = pathToFileURL(bundle).href;
    const locate = sourceMapLocator();
    expect(locate(url, 0, 0)).toBe(join(directory, 'dist', 'engine', 'turn.js'));
    expect(locate(url, 1, 0)).toBe(join(directory, 'node_modules', 'openai', 'client.js'));
    expect(locate('node:events', 3, 1)).toBe('node:events');

    const profile: CpuProfile = {
      nodes: [frame(1, 'a', url, 0), frame(2, 'b', url, 1)],
      samples: [1, 2, 2, 2],
    };
    await writeFile(join(directory, 'CPU.1.cpuprofile'), JSON.stringify(profile));
    expect(summarizeProfileDirectory(directory).components).toEqual([
      { component: 'openai SDK (model requests)', share: 0.75 },
      { component: 'PromptPipe: engine', share: 0.25 },
    ]);
  });
});
