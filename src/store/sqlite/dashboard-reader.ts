/**
 * The SQLite store's dashboard reads (`roster`, `studyDays`) on a worker thread with its own read-only connection.
 * better-sqlite3 runs every statement on the calling thread, so on the server's connection a dashboard query, however
 * well indexed, holds the event loop and every turn waits for it; on the worker a read only holds the worker. The
 * worker starts with the first read and is restarted after a crash; a request it was answering fails with the error.
 */
import { Worker } from 'node:worker_threads';
import { AppError, type AppErrorCode } from '../../domain/errors.ts';
import type { RosterRepository, StudyDayRepository } from '../ports/roster-reads.ts';
import type {
  DashboardReadRequest,
  DashboardReadResponse,
  DashboardReadWorkerData,
} from './dashboard-read-messages.ts';

export interface DashboardReader {
  roster: RosterRepository;
  studyDays: StudyDayRepository;
  close(): Promise<void>;
}

/** Beside this module: the `.ts` source, the compiled `.js`, or the bundle's entry of the same name (scripts/build.ts). */
const WORKER_URL = new URL(`./dashboard-read-worker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);

export function createDashboardReader(data: DashboardReadWorkerData): DashboardReader {
  let worker: Worker | undefined;
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  function failAll(error: Error): void {
    for (const request of pending.values()) request.reject(error);
    pending.clear();
  }

  function started(): Worker {
    if (worker) return worker;
    const thread = new Worker(WORKER_URL, { workerData: data });
    // Reads in flight keep the process alive through their promises; an idle worker must not.
    thread.unref();
    thread.on('message', (response: DashboardReadResponse) => {
      const request = pending.get(response.id);
      if (!request) return;
      pending.delete(response.id);
      if ('error' in response) {
        const { message, code } = response.error;
        request.reject(code ? new AppError(code as AppErrorCode, message) : new Error(message));
      } else request.resolve(response.result);
    });
    thread.on('error', (error) => {
      if (worker === thread) worker = undefined;
      failAll(new Error(`the dashboard read worker failed: ${error.message}`));
    });
    thread.on('exit', () => {
      if (worker === thread) worker = undefined;
      failAll(new Error('the dashboard read worker stopped'));
    });
    worker = thread;
    return thread;
  }

  function read<T>(repository: DashboardReadRequest['repository'], method: string, args: unknown[]): Promise<T> {
    if (closed) return Promise.reject(new AppError('unavailable', 'the store is closed'));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      started().postMessage({ id, repository, method, args } satisfies DashboardReadRequest);
    });
  }

  return {
    roster: { page: (filter) => read('roster', 'page', [filter]) },
    studyDays: {
      figuresByDate: (fromDate, toDate) => read('studyDays', 'figuresByDate', [fromDate, toDate]),
      usageByUtcDate: (from, to) => read('studyDays', 'usageByUtcDate', [from, to]),
      participantCounts: () => read('studyDays', 'participantCounts', []),
      adherencePage: (query) => read('studyDays', 'adherencePage', [query]),
    },
    async close() {
      closed = true;
      const thread = worker;
      worker = undefined;
      failAll(new AppError('unavailable', 'the store is closed'));
      await thread?.terminate();
    },
  };
}
