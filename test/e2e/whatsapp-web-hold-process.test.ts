/**
 * The real `promptpipe serve` on `whatsapp-web` before any device is linked (the fake WhatsApp loaded through the
 * TEST-ONLY PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE): the greeting of a participant enrolled then waits a simulated day
 * in ONE job row, its attempts untouched (it used to be re-queued as a new job every 30 s: 2,881 rows); once
 * `whatsapp login` has linked the device, the next `serve` sends it as soon as the connection opens, without the
 * clock moving, and it is still that one row, now completed.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const SOCKET_MODULE = fileURLToPath(new URL('../support/fake-whatsapp-socket-module.ts', import.meta.url));
const API_TOKEN = 'e2e-hold-api-token';
const CLOCK_START = '2026-03-02T14:00:00.000Z';
const A_DAY_LATER = '2026-03-03T14:00:00.000Z';
const PHONE = '+15551230004';

let fakeDir = '';
let stateDir = '';
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  await rm(fakeDir, { recursive: true, force: true });
  await rm(stateDir, { recursive: true, force: true });
}, 30_000);

function baseEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    PROMPTPIPE_CHANNEL: 'whatsapp-web',
    PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE: SOCKET_MODULE,
    FAKE_WHATSAPP_DIR: fakeDir,
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: CLOCK_START,
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    LOG_LEVEL: 'warn',
  };
}

/** The deliveries in the database, read while no server runs (SQLite: one process at a time). */
function deliveryRows(): { id: string; status: string; attempts: number }[] {
  const database = new SqliteDatabase(join(stateDir, 'promptpipe.db'), { readonly: true });
  try {
    return database
      .prepare("select id, status, attempts from jobs where kind = 'deliver_message' order by enqueue_order")
      .all() as { id: string; status: string; attempts: number }[];
  } finally {
    database.close();
  }
}

function sentTexts(): string[] {
  const file = join(fakeDir, 'sent.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { text?: string }).text ?? '');
}

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('promptpipe serve on whatsapp-web while no device is linked', () => {
  it('holds the greeting a whole day in one job row, then sends it as soon as the device is linked', {
    timeout: 120_000,
  }, async () => {
    fakeDir = await mkdtemp(join(tmpdir(), 'promptpipe-fake-whatsapp-hold-'));
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-e2e-whatsapp-hold-'));

    server = await startServer(baseEnv());
    const running = server;
    await waitFor(
      'the whatsapp-web channel to say it is not linked',
      async () => {
        const health = (await (await fetch(`${running.baseUrl}/health`)).json()) as {
          channels?: Record<string, { state: string }>;
        };
        return health.channels?.['whatsapp-web']?.state === 'not_linked';
      },
      20_000,
      [running],
    );
    const enrolled = await api('POST', '/conversation/participants', { phone_number: PHONE });
    expect(enrolled.status).toBe(201);
    // A simulated day passes while nobody links the device.
    expect((await api('POST', '/admin/clock', { set_to: A_DAY_LATER })).status).toBe(200);
    expect(await stopServer(running)).toEqual({ code: 0, signal: null });

    const held = deliveryRows();
    expect(held).toEqual([{ id: expect.any(String), status: 'pending', attempts: 0 }]);
    expect(sentTexts()).toEqual([]);

    const login = await promisify(execFile)(
      process.execPath,
      ['src/cli/main.ts', 'whatsapp', 'login', '--timeout', '30'],
      { cwd: REPO_ROOT, env: { ...baseEnv(), PROMPTPIPE_ENV_FILE: '', FAKE_WHATSAPP_AUTO_LINK: '1' } },
    );
    expect(login.stdout).toContain('Linked as');

    server = await startServer(baseEnv());
    const linked = server;
    await waitFor('the held greeting to go out', () => sentTexts().length === 1, 20_000, [linked]);
    expect(await stopServer(linked)).toEqual({ code: 0, signal: null });
    expect(deliveryRows()).toEqual([{ id: held[0]?.id, status: 'completed', attempts: 1 }]);
  });
});
