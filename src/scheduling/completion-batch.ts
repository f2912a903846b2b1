/**
 * Job completions written together: every job that finished in the same turn of the event loop is marked completed,
 * with its completion writes (a delivery's receipt), in one transaction. Under load many runs finish together (the
 * gateway's answers to a burst of deliveries arrive in one read of the sockets); one commit each wrote the same pages
 * of the jobs table, its indexes and the receipts again and again, one write-ahead-log frame per page and commit.
 *
 * A completion is never lost or merged into another's failure: when the shared transaction fails (one completion's
 * writes throw, or the database does), nothing of it is kept and each completion is written again in a transaction of
 * its own, so only the one that fails alone rejects. Completion writes only touch the store, so running them a second
 * time after a rollback is safe. A caller's promise settles once its completion is committed.
 */
import type { Store } from '../store/store.ts';
import type { JobCompletion } from './job-runner.ts';

interface PendingCompletion {
  jobId: string;
  now: Date;
  writes: JobCompletion | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface CompletionBatch {
  /** Marks the job completed (after `writes`), together with the others that finish in this turn of the event loop. */
  complete(jobId: string, now: Date, writes?: JobCompletion): Promise<void>;
}

/** Inside the unit of work that completes the job: the completion's writes join it. */
async function write(store: Store, completion: PendingCompletion): Promise<void> {
  await completion.writes?.();
  await store.jobs.complete(completion.jobId, completion.now);
}

export function createCompletionBatch(store: Store): CompletionBatch {
  let pending: PendingCompletion[] = [];

  async function writeAlone(completion: PendingCompletion): Promise<void> {
    try {
      await store.transaction(() => write(store, completion));
      completion.resolve();
    } catch (error) {
      completion.reject(error);
    }
  }

  async function flush(): Promise<void> {
    const batch = pending;
    pending = [];
    const [only] = batch;
    if (batch.length === 1 && only) return writeAlone(only);
    try {
      await store.transaction(async () => {
        for (const completion of batch) await write(store, completion);
      });
    } catch {
      for (const completion of batch) await writeAlone(completion);
      return;
    }
    for (const completion of batch) completion.resolve();
  }

  return {
    complete(jobId, now, writes) {
      return new Promise((resolve, reject) => {
        pending.push({ jobId, now, writes, resolve, reject });
        if (pending.length === 1) setImmediate(() => void flush());
      });
    },
  };
}
