/**
 * Group commit for PostgreSQL, the counterpart of SQLite's (`src/store/sqlite/group-commit.ts`).
 *
 * With PostgreSQL's default `synchronous_commit = on` every commit waits for the server to flush its WAL to disk: a
 * turn commits about six times, and each commit cost a WAL flush on top of its round trip (profiled: `commit` was the
 * single most expensive statement of a turn). The pool's connections therefore run at `synchronous_commit = off`:
 * a commit returns once its WAL record is written, not flushed (a crash of the PostgreSQL server — not of
 * PromptPipe — can lose the last fraction of a second of commits; PostgreSQL never loses consistency by it). Before
 * anything outside learns of a commit — an HTTP response, a message handed to a channel — `Store.durable()` flushes:
 * one small transaction at `synchronous_commit = on` that takes a transaction id, whose commit waits until the WAL up
 * to its own commit record is on disk, which covers every commit made before it, by any instance. Concurrent callers
 * share a flush, so under load many turns pay for one.
 *
 * Another instance may act on a commit before it is flushed only by committing something itself (claiming the job
 * it runs) and then calling `durable()`, whose flush reaches past the first commit too.
 */
import type pg from 'pg';

/** The pool's connections run at `synchronous_commit = off` (a startup parameter of each). */
export const GROUP_COMMIT_STARTUP_OPTION = '-c synchronous_commit=off';

/**
 * One round trip (the simple query protocol runs the four statements in one message). `pg_current_xact_id()` gives
 * the transaction an id, so its commit writes a record and waits for the flush.
 */
const FLUSH_SQL = 'begin; set local synchronous_commit = on; select pg_current_xact_id(); commit';

export interface WalFlush {
  /** Resolves when every commit made (by anyone) before the call is on disk. */
  durable(): Promise<void>;
}

export function createWalFlush(pool: Pick<pg.Pool, 'query'>): WalFlush {
  /** Calls so far, and how many of them a finished flush covers. */
  let requested = 0;
  let flushed = 0;
  let inFlight: Promise<void> | undefined;

  function flushOnce(): Promise<void> {
    const covers = requested;
    inFlight = (async () => {
      await pool.query(FLUSH_SQL);
      flushed = Math.max(flushed, covers);
    })().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  return {
    async durable() {
      requested += 1;
      const target = requested;
      while (flushed < target) {
        // A flush already running may have started before this caller's commit: wait for it, then look again.
        await (inFlight ?? flushOnce());
      }
    },
  };
}
