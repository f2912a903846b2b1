/**
 * `npm run build` (run by `npm ci` through `prepare`, and before every `npm start`): compiles `src/` to `dist/` with
 * `tsc -p tsconfig.build.json`, then bundles the compiled CLI into `dist/bundle/` with rolldown (see `bundle()`),
 * which is what `npm start` runs. When no source or configuration file changed since the last build, it returns at
 * once without starting the compiler, so `npm start` costs no more than before. Builds are serialised by a lock
 * directory, so several `npm start`s launched together (several instances on one machine) never load files another
 * build is still writing: each waits for the build before it, then finds the output up to date.
 *
 * Type errors do not stop the build (tsc still emits, as running the sources with type stripping would); `npm run
 * typecheck` is where they fail.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asciiLegalComments, nonAsciiLines } from './ascii-bundle.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOCK = join(ROOT, 'dist', '.build.lock');
const WAIT_MS = 120_000;
/** A lock without its pid file this long after it was made belongs to a build that died in between. */
const PID_GRACE_MS = 10_000;

function holderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(LOCK).mtimeMs < PID_GRACE_MS;
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function acquire(): void {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!holderAlive()) {
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build has held ${LOCK} for over ${WAIT_MS / 1000} s`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
}

/**
 * Touched after every build that emitted. (tsc's own `.tsbuildinfo` is not rewritten when a source was touched but
 * not changed, so its time cannot tell.)
 */
const STAMP = join(ROOT, 'dist', '.build-stamp');
const BUNDLE_DIRECTORY = join(ROOT, 'dist', 'bundle');
const BUNDLE_ENTRY = join(BUNDLE_DIRECTORY, 'main.js');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestModification(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = stats.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestModification(join(path, entry)));
  return newest;
}

function upToDate(): boolean {
  let built: number;
  try {
    built = statSync(STAMP).mtimeMs;
    statSync(BUNDLE_ENTRY);
  } catch {
    return false;
  }
  return INPUTS.every((input) => newestModification(join(ROOT, input)) < built);
}

/**
 * Packages left out of the bundle and loaded from `node_modules` when needed: native addons (better-sqlite3, and
 * pg's optional pg-native), the SDKs of channels that are off by default (Baileys; Twilio's signature helper pulls in
 * its whole module tree otherwise; grammY, whose Node build brings node-fetch) and pg, which are imported lazily so
 * a server that does not use them never loads them, and qrcode-terminal (CommonJS with legacy octal literals, which a
 * bundler cannot parse; CLI only).
 */
const EXTERNAL_PACKAGES = [
  'better-sqlite3',
  'pg',
  'pg-native',
  '@whiskeysockets/baileys',
  'twilio',
  'grammy',
  'qrcode-terminal',
];

function isExternal(id: string): boolean {
  return EXTERNAL_PACKAGES.some((name) => id === name || id.startsWith(`${name}/`));
}

/**
 * Bundles the compiled CLI and the packages it uses into `dist/bundle/main.js` (with one chunk per lazily imported
 * module: the PostgreSQL store, the WhatsApp Web socket, …). One module instead of about 900 halves the server's
 * start-up and leaves out the library code it never calls: measured in docs/benchmarks.md. The output is not
 * minified, so stack traces keep their function names. `dist/bundle/` sits two levels below the repository, like
 * `src/<layer>/`, so paths the code resolves from its own location (the prompts, the dashboard's assets) still hold.
 */
async function bundle(): Promise<void> {
  // Imported here, so an up-to-date `npm start` does not load the bundler.
  const { build } = await import('rolldown');
  rmSync(BUNDLE_DIRECTORY, { recursive: true, force: true });
  await build({
    // The SQLite store's dashboard reads run on a worker thread, which loads its module from beside the store's
    // (dashboard-reader.ts): in the bundle, `dashboard-read-worker.js` beside `main.js`.
    input: {
      main: join(ROOT, 'dist', 'cli', 'main.js'),
      'dashboard-read-worker': join(ROOT, 'dist', 'store', 'sqlite', 'dashboard-read-worker.js'),
    },
    platform: 'node',
    external: isExternal,
    logLevel: 'warn',
    output: {
      dir: BUNDLE_DIRECTORY,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name].js',
      // For `--enable-source-maps` stack traces and the benchmarks' CPU profile summary (bench/e2e/cpu-profile.ts);
      // Node reads a map only when asked to.
      sourcemap: true,
      sourcemapExcludeSources: true,
      // ASCII and without JSDoc: V8 keeps the whole source in the heap (see ascii-bundle.ts).
      charset: 'ascii',
      comments: { legal: true, annotation: false, jsdoc: false },
      plugins: [asciiLegalComments],
    },
  });
  for (const file of readdirSync(BUNDLE_DIRECTORY).filter((name) => name.endsWith('.js'))) {
    const lines = nonAsciiLines(readFileSync(join(BUNDLE_DIRECTORY, file), 'utf8'));
    if (lines.length > 0) {
      process.stderr.write(
        `build: dist/bundle/${file} has non-ASCII characters (lines ${lines.slice(0, 5).join(', ')}), so V8 keeps ` +
          'its source at two bytes a character: write them as escapes or HTML entities in the source\n',
      );
    }
  }
}

/** tsc's exit status 1 means "errors, outputs generated"; 2 means nothing was emitted. */
const TSC_ERRORS_OUTPUT_GENERATED = 1;

acquire();
try {
  if (!upToDate()) {
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: ROOT, stdio: 'inherit' },
    );
    if (tsc.status === TSC_ERRORS_OUTPUT_GENERATED) {
      process.stderr.write('build: type errors (see above); dist/ was written anyway — run `npm run typecheck`\n');
    }
    if (tsc.status === 0 || tsc.status === TSC_ERRORS_OUTPUT_GENERATED) {
      await bundle();
      writeFileSync(STAMP, new Date().toISOString());
    } else process.exitCode = 1;
  }
} finally {
  rmSync(LOCK, { recursive: true, force: true });
}
