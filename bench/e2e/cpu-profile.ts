/**
 * `npm run bench -- --cpu-profile`: where the measured server's CPU went. The end-to-end and burst benchmarks start
 * their server with `--cpu-prof`; this reads the profile Node writes when the server exits and sorts its samples by
 * component: SQLite, Kysely, the `openai` SDK, Fastify, logging, Node's runtime, garbage collection, and our own code
 * by layer. The bundle's frames are mapped back to their modules through its source maps (`dist/bundle/*.js.map`).
 *
 * A sample is charged to the function running when it was taken (self time). Native work is charged to the
 * JavaScript function that called it: SQLite's own execution shows as the self time of the statement wrappers in
 * `store/sqlite/statement-cache`, which do nothing but call better-sqlite3.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of V8's `.cpuprofile` format read here. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  samples: number[];
}

/** Maps a generated position (0-based line and column) of a script URL to its original file, if known. */
export type Locate = (url: string, line: number, column: number) => string | undefined;

export interface ComponentShare {
  component: string;
  /** Share of the samples in which the process was busy (idle excluded), 0–1. */
  share: number;
}

export interface ProfileSummary {
  /** Share of all samples in which the process was idle, 0–1. */
  idle: number;
  components: ComponentShare[];
}

const IDLE = '(idle)';
const SQLITE = 'SQLite (native, via better-sqlite3)';

/** Packages grouped under one name; any other package is named as itself. */
const PACKAGE_GROUPS: Record<string, string> = {
  'better-sqlite3': SQLITE,
  kysely: 'Kysely (query building and execution)',
  openai: 'openai SDK (model requests)',
  fastify: 'Fastify (HTTP server)',
  '@fastify': 'Fastify (HTTP server)',
  'find-my-way': 'Fastify (HTTP server)',
  'light-my-request': 'Fastify (HTTP server)',
  avvio: 'Fastify (HTTP server)',
  'fast-json-stringify': 'Fastify (HTTP server)',
  ajv: 'Fastify (HTTP server)',
  pino: 'logging (pino)',
  'sonic-boom': 'logging (pino)',
  'pino-std-serializers': 'logging (pino)',
  'temporal-polyfill': 'time zones (temporal-polyfill)',
};

/** Our statement wrappers: their self time is SQLite running the statement. */
const SQLITE_WRAPPER = /[\\/](?:src|dist)[\\/]store[\\/]sqlite[\\/]statement-cache\.[jt]s$/;
const OWN_LAYER = /[\\/](?:src|dist)[\\/]([^\\/]+)[\\/]/;

/** Node's own modules, by what they do. */
function componentOfNodeModule(url: string): string {
  if (url.includes('/deps/undici')) return 'Node.js: fetch (undici)';
  if (/^node:(?:internal\/)?(?:_http_|http|https|net|internal\/http|internal\/net|dns)/.test(url)) {
    return 'Node.js: HTTP and sockets';
  }
  if (/internal\/(?:streams|webstreams)/.test(url)) return 'Node.js: streams';
  if (url.includes('crypto')) return 'Node.js: crypto (hashes, random ids)';
  if (/internal\/(?:modules|bootstrap)/.test(url)) return 'Node.js: module loading (start-up)';
  return 'Node.js: other built-in modules';
}

/** The component a file belongs to (a path on disk, or a `node:` URL). */
export function componentOfFile(file: string): string {
  if (file.startsWith('node:')) return componentOfNodeModule(file);
  const packageMatch = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file);
  if (packageMatch?.[1]) {
    const name = packageMatch[1].replace(/\\/g, '/');
    return PACKAGE_GROUPS[name] ?? PACKAGE_GROUPS[name.split('/')[0] ?? ''] ?? name;
  }
  if (SQLITE_WRAPPER.test(file)) return SQLITE;
  const layer = OWN_LAYER.exec(file)?.[1];
  return layer && layer !== 'bundle' ? `PromptPipe: ${layer}` : 'other';
}

function componentOfFrame(frame: CpuProfile['nodes'][number]['callFrame'], locate: Locate): string {
  if (frame.functionName === '(garbage collector)') return 'garbage collection';
  if (frame.functionName === '(program)') return 'V8 and native code, unattributed';
  // Frames without a script: promise jobs, and native functions such as a socket's `writev` or an `fsync`.
  if (frame.url === '') {
    return frame.functionName === 'runMicrotasks' ? 'promise jobs (microtasks)' : 'native bindings (system calls)';
  }
  const file = locate(frame.url, frame.lineNumber, frame.columnNumber) ?? frame.url;
  return componentOfFile(file);
}

/** Sorts a profile's samples by component, largest first; idle samples are counted apart. */
export function summarizeCpuProfile(profile: CpuProfile, locate: Locate): ProfileSummary {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const componentByNode = new Map<number, string>();
  const counts = new Map<string, number>();
  let idle = 0;
  for (const id of profile.samples) {
    const frame = frames.get(id);
    if (!frame) continue;
    if (frame.functionName === IDLE) {
      idle += 1;
      continue;
    }
    let component = componentByNode.get(id);
    if (component === undefined) {
      component = componentOfFrame(frame, locate);
      componentByNode.set(id, component);
    }
    counts.set(component, (counts.get(component) ?? 0) + 1);
  }
  const busy = profile.samples.length - idle;
  return {
    idle: profile.samples.length === 0 ? 0 : idle / profile.samples.length,
    components: [...counts]
      .map(([component, count]) => ({ component, share: busy === 0 ? 0 : count / busy }))
      .sort((a, b) => b.share - a.share),
  };
}

/** Locates positions in files that have a `<file>.map` next to them (the bundle); other files stand for themselves. */
export function sourceMapLocator(): Locate {
  const maps = new Map<string, SourceMap | null>();
  function mapOf(path: string): SourceMap | null {
    let map = maps.get(path);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
      } catch {
        map = null;
      }
      maps.set(path, map);
    }
    return map;
  }
  return (url, line, column) => {
    if (!url.startsWith('file:')) return url;
    const path = fileURLToPath(url);
    const entry = mapOf(path)?.findEntry(line, column);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) return path;
    const source = entry.originalSource;
    return source.startsWith('file:') ? fileURLToPath(source) : resolve(dirname(path), source.split('/').join(sep));
  };
}

/** The summary of the one `.cpuprofile` Node wrote into `directory`. */
export function summarizeProfileDirectory(directory: string): ProfileSummary {
  const files = readdirSync(directory).filter((file) => file.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one .cpuprofile in ${directory}, found ${files.length}`);
  const profile = JSON.parse(readFileSync(join(directory, files[0] ?? ''), 'utf8')) as CpuProfile;
  return summarizeCpuProfile(profile, sourceMapLocator());
}
