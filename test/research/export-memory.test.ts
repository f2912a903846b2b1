/**
 * A 100,000-message export in bounded memory: the transcript holds ~100 MB of text (1 KB per message); the export
 * streams it to a file while the live heap is sampled (after a forced garbage collection, so uncollected garbage does
 * not count). Holding the table would grow the live heap by over 100 MB; the bound is a generous 48 MB.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { exportToDirectory } from '../../src/research/export/export-to-directory.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const MESSAGES = 100_000;

/** A full garbage collection: `--expose-gc` switched on at run time, `gc` taken from a fresh context. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
const directory = mkdtempSync(join(tmpdir(), 'promptpipe-export-memory-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

it('exports 100,000 messages with bounded heap growth', async () => {
  const filename = join(directory, 'study.db');
  await (await createSqliteStore({ filename })).close();
  const raw = new SqliteDatabase(filename);
  const insert = raw.prepare(
    'insert into transcript (participant_id, role, kind, content, created_at) values (?, ?, ?, ?, ?)',
  );
  const filler = 'x'.repeat(1000);
  raw.transaction(() => {
    for (let index = 0; index < MESSAGES; index += 1) {
      const at = new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString();
      insert.run(`p${index % 50}`, index % 2 === 0 ? 'user' : 'assistant', 'message', `${index} ${filler}`, at);
    }
  })();
  raw.close();

  const store = await createSqliteStore({ filename });
  const out = join(directory, 'out');
  let baseline = 0;
  let peak = 0;
  let rows = 0;
  try {
    collectGarbage();
    baseline = process.memoryUsage().heapUsed;
    await exportToDirectory({
      directory: out,
      format: 'jsonl',
      context: {
        store,
        filter: { participantIds: [], since: undefined },
        pseudonymizer: undefined,
        defaultChannel: 'webhook',
      },
      version: 'test',
      exportedAt: new Date(),
      progress: {
        tableStarted: () => undefined,
        tableFinished: () => undefined,
        rowWritten: () => {
          rows += 1;
          if (rows % 10_000 !== 0) return;
          collectGarbage();
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        },
      },
    });
  } finally {
    await store.close();
  }
  expect(rows).toBe(MESSAGES);
  expect(statSync(join(out, 'messages.jsonl')).size).toBeGreaterThan(MESSAGES * 1000);
  const lastLine = readFileSync(join(out, 'messages.jsonl'), 'utf8').trimEnd().split('\n').at(-1) ?? '{}';
  expect(JSON.parse(lastLine).content.startsWith(`${MESSAGES - 1} `)).toBe(true);
  const growthMb = (peak - baseline) / 1024 / 1024;
  expect(growthMb).toBeLessThan(48);
}, 120_000);
