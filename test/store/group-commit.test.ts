/**
 * SQLite group commit (group-commit.ts): commits are counted from the statements the connection runs, and
 * `durable()` syncs the WAL once for every commit made before it, sharing one sync among concurrent callers. The sync
 * function is injected to count and pace the syncs; the database is a real WAL-mode file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGroupCommit, type GroupCommit } from '../../src/store/sqlite/group-commit.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { withStatementCache } from '../../src/store/sqlite/statement-cache.ts';

interface Harness {
  groupCommit: GroupCommit;
  run(sqlText: string, parameters?: unknown[]): void;
  /** The paths synced so far, in order. */
  synced: string[];
  /** While set, each sync waits for this promise (to hold a sync in flight). */
  gate: Promise<void> | undefined;
  failNext: boolean;
}

describe('SQLite group commit', () => {
  let directory: string;
  let database: BetterSqlite3.Database | undefined;
  /** Each harness's group commit, closed after the test (it keeps the WAL open). */
  let opened: GroupCommit[] = [];

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-group-commit-'));
  });
  afterEach(async () => {
    for (const groupCommit of opened) await groupCommit.close().catch(() => undefined);
    opened = [];
    database?.close();
    database = undefined;
    await rm(directory, { recursive: true, force: true });
  });

  function open(): Harness {
    const filename = join(directory, 'test.db');
    const connection = new BetterSqlite3(filename);
    database = connection;
    connection.pragma('journal_mode = WAL');
    connection.pragma('synchronous = NORMAL');
    connection.exec('create table notes (text text)');
    const harness: Harness = {
      synced: [],
      gate: undefined,
      failNext: false,
      groupCommit: createGroupCommit({
        filename,
        sync: async (_file, path) => {
          if (harness.gate) await harness.gate;
          if (harness.failNext) {
            harness.failNext = false;
            throw new Error('EIO: the disk failed');
          }
          harness.synced.push(path);
        },
      }),
      run(sqlText, parameters = []) {
        cached.prepare(sqlText).run(parameters as never);
      },
    };
    const cached = withStatementCache(connection, { observer: harness.groupCommit.afterStatement });
    opened.push(harness.groupCommit);
    return harness;
  }

  const walSyncs = (harness: Harness) => harness.synced.filter((path) => path.endsWith('-wal')).length;

  it('does not sync when nothing was committed, nor after reads only', async () => {
    const harness = open();
    await harness.groupCommit.durable();
    harness.run('select count(*) from notes');
    await harness.groupCommit.durable();
    expect(harness.synced).toEqual([]);
  });

  it('syncs the WAL after a commit, and the directory and database file the first time', async () => {
    const harness = open();
    harness.run('insert into notes values (?)', ['one']);
    await harness.groupCommit.durable();
    expect(harness.synced).toEqual([directory, join(directory, 'test.db'), join(directory, 'test.db-wal')]);
    // Nothing new: no second sync.
    await harness.groupCommit.durable();
    expect(walSyncs(harness)).toBe(1);
    harness.run('insert into notes values (?)', ['two']);
    await harness.groupCommit.durable();
    expect(walSyncs(harness)).toBe(2);
    expect(harness.synced).toHaveLength(4);
  });

  it('serves every concurrent caller with one sync', async () => {
    const harness = open();
    for (let index = 0; index < 5; index += 1) harness.run('insert into notes values (?)', [`note ${index}`]);
    await Promise.all(Array.from({ length: 20 }, () => harness.groupCommit.durable()));
    expect(walSyncs(harness)).toBe(1);
  });

  it('counts a transaction once, at its commit, not at its writes', async () => {
    const harness = open();
    harness.run('begin');
    harness.run('insert into notes values (?)', ['inside']);
    // Uncommitted: there is nothing to make durable yet.
    await harness.groupCommit.durable();
    expect(walSyncs(harness)).toBe(0);
    harness.run('commit');
    await harness.groupCommit.durable();
    expect(walSyncs(harness)).toBe(1);
  });

  it('makes a commit that happened while a sync was running wait for the next sync', async () => {
    const harness = open();
    harness.run('insert into notes values (?)', ['first']);
    let release: () => void = () => undefined;
    harness.gate = new Promise((resolve) => {
      release = resolve;
    });
    const first = harness.groupCommit.durable();
    // The first sync is in flight (held by the gate); a second commit lands meanwhile.
    await new Promise((resolve) => setImmediate(resolve));
    harness.run('insert into notes values (?)', ['second']);
    let secondDone = false;
    const second = harness.groupCommit.durable().then(() => {
      secondDone = true;
    });
    harness.gate = undefined;
    release();
    await first;
    await second;
    expect(secondDone).toBe(true);
    // One sync could not cover the second commit: it started before it.
    expect(walSyncs(harness)).toBe(2);
  });

  it('rejects when the sync fails and tries again on the next call', async () => {
    const harness = open();
    harness.run('insert into notes values (?)', ['one']);
    harness.failNext = true;
    await expect(harness.groupCommit.durable()).rejects.toThrow(/EIO/);
    await harness.groupCommit.durable();
    expect(walSyncs(harness)).toBe(1);
  });
});

describe('the SQLite store and SQLITE_SYNCHRONOUS', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'promptpipe-synchronous-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  for (const synchronous of ['group', 'full', 'normal'] as const) {
    it(`${synchronous}: durable() resolves after writes, and the data is there after reopening`, async () => {
      const filename = join(directory, `${synchronous}.db`);
      const store = await createSqliteStore({ filename, synchronous });
      await store.events.record({ type: 'test-event', data: { synchronous }, createdAt: new Date(0) });
      await store.durable();
      await store.close();
      const reopened = await createSqliteStore({ filename, synchronous });
      try {
        expect((await reopened.events.list({ type: 'test-event' })).map((event) => event.data)).toEqual([
          { synchronous },
        ]);
      } finally {
        await reopened.close();
      }
    });
  }
});
