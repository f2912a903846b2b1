/**
 * Group commit for SQLite (`SQLITE_SYNCHRONOUS=group`, the default).
 *
 * With SQLite's `synchronous=FULL` every commit waits for an fsync of the WAL, and better-sqlite3 runs it on the
 * event loop: each commit of a turn blocked the whole server for the disk's flush, whatever else was waiting. Group
 * commit runs SQLite at `synchronous=NORMAL` (a commit is written to the WAL but not synced: a process crash loses
 * nothing, a power loss could lose the latest commits) and makes the commits durable where it matters — before anything
 * outside learns of them: an HTTP response (an acknowledged inbound message, an enrollment) and a message handed to a
 * channel. There `durable()` fsyncs the WAL file on libuv's thread pool, without blocking the event loop, and one fsync
 * covers every commit made before it started, whoever made it: under load, many turns share one sync.
 *
 * Why an fsync of the WAL file makes earlier commits durable: in WAL mode a commit appends its frames to the WAL with
 * write(); fsync(2) on any descriptor of that file flushes all of its written data. A checkpoint copies the WAL into
 * the database file; at `synchronous=NORMAL` SQLite syncs the WAL before a checkpoint and the database after it, so
 * frames moved out of the WAL are durable in the database file by then.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface GroupCommit {
  /**
   * To be called after every statement the connection ran, with whether the statement writes and whether the
   * connection is still inside a transaction afterwards: counts the commits that wrote something.
   */
  afterStatement(statement: { readonly: boolean }, inTransaction: boolean): void;
  /** Resolves when every commit made before the call is on disk (immediately when nothing was committed since). */
  durable(): Promise<void>;
  /** Syncs what is left and releases the file descriptors. */
  close(): Promise<void>;
}

export interface GroupCommitOptions {
  /** The database file; its WAL is `<filename>-wal`. */
  filename: string;
  /** Flushes a file to disk; default `FileHandle.sync()` (fsync on the thread pool). Tests count the calls. */
  sync?: (file: FileHandle, path: string) => Promise<void>;
}

export function createGroupCommit(options: GroupCommitOptions): GroupCommit {
  const sync = options.sync ?? ((file: FileHandle) => file.sync());
  const walPath = `${options.filename}-wal`;
  /** Commits that wrote something, counted since the store opened. */
  let committed = 0;
  /** Every commit up to this count is known to be on disk. */
  let synced = 0;
  /** A write ran in the transaction still open (its commit is what counts). */
  let pendingWrites = false;
  let inFlight: Promise<void> | undefined;
  let wal: FileHandle | undefined;

  async function syncFile(path: string): Promise<void> {
    const file = await open(path, 'r');
    try {
      await sync(file, path);
    } finally {
      await file.close();
    }
  }

  /** Flushes the WAL; the first time, also the directory entry that created it and the database file. */
  async function syncWal(): Promise<void> {
    if (!wal) {
      let opened: FileHandle;
      try {
        opened = await open(walPath, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        // No WAL (yet): whatever was committed is in the database file.
        await syncFile(options.filename);
        return;
      }
      try {
        await syncFile(dirname(options.filename));
        await syncFile(options.filename);
      } catch (error) {
        // Tried again from the start on the next call: the descriptor is not kept.
        await opened.close();
        throw error;
      }
      wal = opened;
    }
    await sync(wal, walPath);
  }

  /** One fsync, covering every commit counted when it starts. */
  function syncOnce(): Promise<void> {
    const covers = committed;
    const run = (async () => {
      await syncWal();
      synced = Math.max(synced, covers);
    })();
    inFlight = run.finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  async function durable(): Promise<void> {
    const target = committed;
    while (synced < target) {
      // A sync already running may have started before this caller's commit: wait for it, then look again.
      await (inFlight ?? syncOnce());
    }
  }

  return {
    afterStatement(statement, inTransaction) {
      if (!statement.readonly) pendingWrites = true;
      if (!inTransaction && pendingWrites) {
        committed += 1;
        pendingWrites = false;
      }
    },
    durable,
    async close() {
      try {
        await durable();
      } finally {
        await wal?.close();
        wal = undefined;
      }
    },
  };
}
